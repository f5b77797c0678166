import { Logger, type Provider } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { PrismaService } from '@tally/db';
import { LivekitEgressClient, LivekitRoomClient } from '@tally/livekit';
import { NodeWorkers } from '@tally/nodes';
import { CacheInvalidation, Clock } from '@tally/runtime';
import { WebhookOutbox } from '@tally/webhooks';
import { CameraLifecycle } from './camera-lifecycle.js';
import { HlsLifecycle } from './hls-lifecycle.js';
import { IngressLifecycle } from './ingress-lifecycle.js';
import { StreamLifecycle } from './stream-lifecycle.js';

/** The lifecycles, for a module's `exports`. */
export const STREAM_LIFECYCLES = [StreamLifecycle, IngressLifecycle, HlsLifecycle, CameraLifecycle];

/** The lifecycles as the API and the worker both provide them, on RuntimeModule's adapters. */
export const STREAM_PROVIDERS: Provider[] = [
  {
    provide: StreamLifecycle,
    useFactory: (prisma: PrismaService, ledger: CapacityLedger, outbox: WebhookOutbox, invalidation: CacheInvalidation) =>
      new StreamLifecycle(prisma, ledger, outbox, invalidation),
    inject: [PrismaService, CapacityLedger, WebhookOutbox, CacheInvalidation],
  },
  {
    provide: IngressLifecycle,
    useFactory: (
      prisma: PrismaService,
      ledger: CapacityLedger,
      admitter: Admitter,
      outbox: WebhookOutbox,
      workers: NodeWorkers,
      rooms: LivekitRoomClient,
    ) => {
      const logger = new Logger(IngressLifecycle.name);
      return new IngressLifecycle(prisma, ledger, admitter, outbox, workers, rooms, (message) => logger.warn(message));
    },
    inject: [PrismaService, CapacityLedger, Admitter, WebhookOutbox, NodeWorkers, LivekitRoomClient],
  },
  {
    provide: HlsLifecycle,
    useFactory: (
      prisma: PrismaService,
      ledger: CapacityLedger,
      admitter: Admitter,
      egress: LivekitEgressClient,
      config: Config,
      clock: Clock,
    ) => {
      const logger = new Logger(HlsLifecycle.name);
      return new HlsLifecycle(prisma, ledger, admitter, egress, {
        retentionS: config.hls.retentionS,
        log: (message) => logger.log(message),
        now: () => clock.now(),
      });
    },
    inject: [PrismaService, CapacityLedger, Admitter, LivekitEgressClient, CONFIG, Clock],
  },
  {
    provide: CameraLifecycle,
    useFactory: (prisma: PrismaService, ledger: CapacityLedger, admitter: Admitter) => new CameraLifecycle(prisma, ledger, admitter),
    inject: [PrismaService, CapacityLedger, Admitter],
  },
];

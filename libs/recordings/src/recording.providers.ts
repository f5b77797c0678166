import { Logger, type Provider } from '@nestjs/common';
import { getSharedConfigToken } from '@nestjs/bullmq';
import type { QueueOptions } from 'bullmq';
import { Admitter, CapacityLedger } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { PrismaService } from '@tally/db';
import { LivekitEgressClient } from '@tally/livekit';
import { UsageIntervals } from '@tally/metering';
import { WebhookOutbox } from '@tally/webhooks';
import { FinaliseQueue } from './finalise.queue.js';
import { LadderLifecycle } from './ladder/ladder-lifecycle.js';
import { LadderQueue } from './ladder/ladder.queue.js';
import { StagingQueue } from './staging.queue.js';
import { PassthroughEgresses } from './passthrough-egresses.js';
import { RecordingFileStore } from './recording-file-store.js';
import { RecordingLifecycle } from './recording-lifecycle.js';
import { RecordingRemoval } from './recording-removal.js';
import { RecordingStopper } from './recording-stopper.js';

/**
 * The finalise and ladder queues and the state machines, as the API and the worker both provide
 * them (both register QUEUES.recordings with QueuesModule); the egress adapter comes from RuntimeModule.
 */
export const RECORDING_PROVIDERS: Provider[] = [
  FinaliseQueue,
  {
    provide: RecordingLifecycle,
    useFactory: (prisma: PrismaService, ledger: CapacityLedger, outbox: WebhookOutbox, queue: FinaliseQueue) =>
      new RecordingLifecycle(prisma, ledger, outbox, queue),
    inject: [PrismaService, CapacityLedger, WebhookOutbox, FinaliseQueue],
  },
  {
    provide: PassthroughEgresses,
    useFactory: (prisma: PrismaService, egress: LivekitEgressClient, lifecycle: RecordingLifecycle, config: Config) =>
      new PassthroughEgresses(prisma, egress, lifecycle, config.recordings),
    inject: [PrismaService, LivekitEgressClient, RecordingLifecycle, CONFIG],
  },
  {
    provide: RecordingRemoval,
    useFactory: (prisma: PrismaService, outbox: WebhookOutbox, config: Config) =>
      new RecordingRemoval(prisma, outbox, new RecordingFileStore(config.recordings)),
    inject: [PrismaService, WebhookOutbox, CONFIG],
  },
  {
    provide: RecordingStopper,
    useFactory: (egress: LivekitEgressClient, lifecycle: RecordingLifecycle, passthrough: PassthroughEgresses) => {
      const logger = new Logger(RecordingStopper.name);
      return new RecordingStopper(egress, lifecycle, passthrough, (message) => logger.warn(message));
    },
    inject: [LivekitEgressClient, RecordingLifecycle, PassthroughEgresses],
  },
  // Per-node queues, opened at run time over the connection options BullModule.forRoot was given.
  { provide: LadderQueue, useFactory: (bull: QueueOptions) => new LadderQueue(bull.connection), inject: [getSharedConfigToken()] },
  { provide: StagingQueue, useFactory: (bull: QueueOptions) => new StagingQueue(bull.connection), inject: [getSharedConfigToken()] },
  {
    provide: LadderLifecycle,
    useFactory: (prisma: PrismaService, admitter: Admitter, ledger: CapacityLedger, outbox: WebhookOutbox, queue: LadderQueue) =>
      new LadderLifecycle(prisma, admitter, ledger, outbox, queue, new UsageIntervals(prisma)),
    inject: [PrismaService, Admitter, CapacityLedger, WebhookOutbox, LadderQueue],
  },
];

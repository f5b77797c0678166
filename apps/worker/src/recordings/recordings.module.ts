import { Module } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { PrismaService } from '@tally/db';
import { LivekitEgressClient } from '@tally/livekit';
import { FinaliseQueue, RecordingLifecycle } from '@tally/recordings';
import { WebhookOutbox } from '@tally/webhooks';
import { EgressReconciler } from './egress-reconciler.service.js';
import { RecordingFinaliser } from './recording-finaliser.service.js';
import { RecordingsRunner } from './recordings.runner.js';

/** Recording finalisation and the egress side of reconciliation. */
@Module({
  providers: [
    { provide: LivekitEgressClient, useFactory: (config: Config) => new LivekitEgressClient(config.livekit), inject: [CONFIG] },
    { provide: FinaliseQueue, useFactory: (config: Config) => new FinaliseQueue(config.redisUrl), inject: [CONFIG] },
    {
      provide: RecordingLifecycle,
      useFactory: (prisma: PrismaService, ledger: CapacityLedger, outbox: WebhookOutbox, queue: FinaliseQueue) =>
        new RecordingLifecycle(prisma, ledger, outbox, queue),
      inject: [PrismaService, CapacityLedger, WebhookOutbox, FinaliseQueue],
    },
    RecordingFinaliser,
    RecordingsRunner,
    EgressReconciler,
  ],
  exports: [EgressReconciler],
})
export class RecordingsWorkerModule {}

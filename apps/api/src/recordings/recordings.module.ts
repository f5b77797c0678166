import { Module } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { PrismaService } from '@tally/db';
import { LivekitEgressClient } from '@tally/livekit';
import { FinaliseQueue, RecordingLifecycle } from '@tally/recordings';
import { WebhookOutbox } from '@tally/webhooks';
import { StreamsModule } from '../streams/streams.module.js';
import { RecordingFileService } from './recording-file.service.js';
import { RecordingStorage } from './recording-storage.js';
import { RecordingsController } from './recordings.controller.js';
import { RecordingsRepository } from './recordings.repository.js';
import { RecordingsService } from './recordings.service.js';

@Module({
  imports: [StreamsModule],
  controllers: [RecordingsController],
  providers: [
    { provide: LivekitEgressClient, useFactory: (config: Config) => new LivekitEgressClient(config.livekit), inject: [CONFIG] },
    { provide: FinaliseQueue, useFactory: (config: Config) => new FinaliseQueue(config.redisUrl), inject: [CONFIG] },
    {
      provide: RecordingLifecycle,
      useFactory: (prisma: PrismaService, ledger: CapacityLedger, outbox: WebhookOutbox, queue: FinaliseQueue) =>
        new RecordingLifecycle(prisma, ledger, outbox, queue),
      inject: [PrismaService, CapacityLedger, WebhookOutbox, FinaliseQueue],
    },
    RecordingStorage,
    RecordingsRepository,
    RecordingsService,
    RecordingFileService,
  ],
  exports: [RecordingLifecycle],
})
export class RecordingsModule {}

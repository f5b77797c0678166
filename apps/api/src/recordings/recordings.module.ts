import { Module } from '@nestjs/common';
import { PassthroughEgresses, RECORDING_PROVIDERS, RecordingLifecycle } from '@tally/recordings';
import { StreamsModule } from '../streams/streams.module.js';
import { RecordingDeletion } from './recording-deletion.service.js';
import { LadderController } from './ladder.controller.js';
import { LadderService } from './ladder.service.js';
import { RecordingFileService } from './recording-file.service.js';
import { RecordingStorage } from './recording-storage.js';
import { RecordingsController } from './recordings.controller.js';
import { RecordingsRepository } from './recordings.repository.js';
import { RecordingsService } from './recordings.service.js';

@Module({
  imports: [StreamsModule],
  controllers: [RecordingsController, LadderController],
  providers: [
    ...RECORDING_PROVIDERS,
    RecordingStorage,
    RecordingsRepository,
    RecordingsService,
    RecordingFileService,
    LadderService,
    RecordingDeletion,
  ],
  exports: [RecordingLifecycle, PassthroughEgresses],
})
export class RecordingsModule {}

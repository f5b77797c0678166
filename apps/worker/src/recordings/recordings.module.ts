import { Module } from '@nestjs/common';
import { LadderLifecycle, PassthroughEgresses, RECORDING_PROVIDERS, RecordingLifecycle, RecordingStopper } from '@tally/recordings';
import { EgressReconciler } from './egress-reconciler.service.js';
import { HlsJanitor } from './hls-janitor.service.js';
import { HlsProcessor } from './hls.processor.js';
import { HlsReconciler } from './hls-reconciler.service.js';
import { HlsSessionsRepository } from './hls-sessions.repository.js';
import { LadderRestorer } from './ladder-restorer.service.js';
import { NodeDepartures } from './node-departures.service.js';
import { NodeStaging } from './node-staging.service.js';
import { RecordingLimitsRepository } from './recording-limits.repository.js';
import { RecordingRowsRepository } from './recording-rows.repository.js';
import { RecordingLimits } from './recording-limits.service.js';
import { RecordingFinaliser } from './recording-finaliser.service.js';
import { RecordingsProcessor } from './recordings.processor.js';
import { RecordingUploader } from './recording-uploader.service.js';
import { WorkerExits } from './worker-exits.service.js';
import { TranscodesProcessor } from './transcodes.processor.js';

/** Recording finalisation, ladder reports, live HLS sessions, and the egress side of reconciliation. */
@Module({
  providers: [
    ...RECORDING_PROVIDERS,
    RecordingRowsRepository,
    RecordingFinaliser,
    RecordingUploader,
    NodeStaging,
    RecordingsProcessor,
    TranscodesProcessor,
    EgressReconciler,
    WorkerExits,
    NodeDepartures,
    HlsSessionsRepository,
    HlsReconciler,
    HlsJanitor,
    HlsProcessor,
    LadderRestorer,
    RecordingLimitsRepository,
    RecordingLimits,
  ],
  exports: [
    NodeStaging,
    RecordingLimits,
    RecordingUploader,
    HlsReconciler,
    LadderRestorer,
    EgressReconciler,
    WorkerExits,
    NodeDepartures,
    RecordingLifecycle,
    RecordingStopper,
    PassthroughEgresses,
    LadderLifecycle,
  ],
})
export class RecordingsWorkerModule {}

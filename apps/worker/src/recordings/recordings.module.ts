import { Module } from '@nestjs/common';
import { RECORDING_PROVIDERS } from '@tally/recordings';
import { EgressReconciler } from './egress-reconciler.service.js';
import { RecordingFinaliser } from './recording-finaliser.service.js';
import { RecordingsRunner } from './recordings.runner.js';
import { WorkerExits } from './worker-exits.service.js';

/** Recording finalisation and the egress side of reconciliation. */
@Module({
  providers: [...RECORDING_PROVIDERS, RecordingFinaliser, RecordingsRunner, EgressReconciler, WorkerExits],
  exports: [EgressReconciler, WorkerExits],
})
export class RecordingsWorkerModule {}

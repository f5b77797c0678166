import type { Recording } from '@tally/db';
import type { LivekitEgressClient } from '@tally/livekit';
import type { PassthroughEgresses } from './passthrough-egresses.js';
import type { RecordingLifecycle } from './recording-lifecycle.js';

type Log = (message: string) => void;

/**
 * Asks egress to finish an open recording's file, whoever asks (the app through the API, the worker
 * when a disk reached its watermark): the recording then completes through the lifecycle like any
 * other, once egress reported the end and the finaliser checked (and for passthrough joined) it.
 */
export class RecordingStopper {
  constructor(
    private readonly egress: LivekitEgressClient,
    private readonly lifecycle: RecordingLifecycle,
    private readonly passthrough: PassthroughEgresses,
    private readonly warn: Log = () => undefined,
  ) {}

  async stop(recording: Recording, now: Date): Promise<void> {
    if (recording.status !== 'starting' && recording.status !== 'active') return;
    if (recording.mode === 'passthrough') {
      await this.lifecycle.stopRequested(recording.id, now);
      await this.passthrough.stopAll(recording.id, now);
    } else if (!recording.egressId) {
      await this.lifecycle.fail(recording.id, 'stopped before egress started', now);
    } else {
      await this.stopEgress(recording, recording.egressId, now);
    }
  }

  private async stopEgress(recording: Recording, egressId: string, now: Date): Promise<void> {
    try {
      const egress = await this.egress.stop(egressId);
      await this.lifecycle.applyEgress(egress, now);
    } catch (error) {
      // LiveKit no longer knows the egress: it cannot finish the file.
      const known = await this.egress.list({ activeOnly: false }).then(
        (all) => all.find((e) => e.egressId === egressId),
        () => undefined,
      );
      if (known) {
        await this.lifecycle.applyEgress(known, now);
        return;
      }
      this.warn(`stop ${recording.id}: egress ${egressId} unknown to LiveKit: ${String(error)}`);
      await this.lifecycle.fail(recording.id, 'egress vanished', now);
    }
  }
}

import type { Config } from '@tally/config';
import type { PrismaClient, RecordingEgress } from '@tally/db';
import type { LivekitEgressClient } from '@tally/livekit';
import { egressDestination } from './egress-destination.js';
import { type PassthroughTrack, partLocation } from './passthrough.js';
import type { RecordingLifecycle } from './recording-lifecycle.js';
import { extensionFor } from './recording-files.js';

export type PassthroughSource = Readonly<{ track: PassthroughTrack; sid: string; mimeType: string }>;

/**
 * Starts, replaces and stops the Track egresses of passthrough recordings (one per track, each
 * writing the track as sent). The rows are written before LiveKit is asked, so an egress whose
 * webhook beats the start call's reply is still found by the file path it writes.
 */
export class PassthroughEgresses {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly egress: LivekitEgressClient,
    private readonly lifecycle: RecordingLifecycle,
    private readonly recordings: Config['recordings'],
  ) {}

  /** Both egresses at once; if either cannot start, the other is stopped and the error thrown. */
  async start(
    recording: Readonly<{ id: string; location: string }>,
    room: string,
    sources: readonly PassthroughSource[],
    now: Date,
  ): Promise<void> {
    await this.prisma.recordingEgress.createMany({
      data: sources.map((s) => ({
        recordingId: recording.id,
        track: s.track,
        trackSid: s.sid,
        location: partLocation(recording.location, s.track, extensionFor('track', s.mimeType)),
      })),
      skipDuplicates: true,
    });
    const parts = await this.prisma.recordingEgress.findMany({ where: { recordingId: recording.id } });
    const started = await Promise.allSettled(parts.map((part) => this.startPart(part, room, now)));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      await this.stopAll(recording.id);
      throw failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason));
    }
  }

  /**
   * A Track egress can stay STARTING when it subscribes right after another egress on the same
   * video track (it waits for a keyframe that does not come): it is stopped and started again,
   * writing to the same file.
   */
  async replace(part: RecordingEgress, room: string, now: Date): Promise<void> {
    if (part.egressId) await this.egress.stop(part.egressId).catch(() => undefined);
    const attempt = part.attempt + 1;
    const location = part.location.replace(/\.(video|audio)(?:-\d+)?\.([a-z0-9]+)$/, `.$1-${attempt}.$2`);
    const { count } = await this.prisma.recordingEgress.updateMany({
      where: { recordingId: part.recordingId, track: part.track, attempt: part.attempt },
      data: { egressId: null, state: 'starting', startedAt: null, mediaStartedAt: null, attempt, location, requestedAt: now },
    });
    if (count === 1) await this.startPart({ ...part, egressId: null, attempt, location }, room, now);
  }

  /**
   * Once a passthrough recording failed, or was cut by one egress dying, the other egress has
   * nothing left to record for: it is stopped (its file is kept for the cut recording).
   */
  async stopSurvivor(
    recording: Readonly<{ id: string; mode: string; status: string; error: string | null }> | undefined,
    now: Date,
  ): Promise<void> {
    if (recording?.mode !== 'passthrough') return;
    if (recording.status === 'failed' || (recording.status === 'ending' && recording.error !== null)) await this.stopAll(recording.id, now);
  }

  /** Asks every running egress of the recording to close its file. */
  async stopAll(recordingId: string, now?: Date): Promise<void> {
    const parts = await this.prisma.recordingEgress.findMany({ where: { recordingId } });
    for (const part of parts) {
      if (!part.egressId || !['starting', 'active'].includes(part.state)) continue;
      const summary = await this.egress.stop(part.egressId).catch(() => undefined);
      if (summary && now) await this.lifecycle.applyEgress(summary, now);
    }
  }

  private async startPart(part: RecordingEgress, room: string, now: Date): Promise<void> {
    const summary = await this.egress.start(
      { mode: 'track', room, trackSid: part.trackSid },
      egressDestination(this.recordings, part.location),
    );
    await this.prisma.recordingEgress.updateMany({
      where: { recordingId: part.recordingId, track: part.track, attempt: part.attempt, egressId: null },
      data: { egressId: summary.egressId },
    });
    await this.lifecycle.applyEgress(summary, now);
  }
}

import { Injectable } from '@nestjs/common';
import { Admitter } from '@tally/admission';
import { egressKindOf, explainRefusal, type ModeCandidate, type RecordingShape, recordingCandidates, type Refusal } from '@tally/capacity';
import { newId, type RecordingListQuery, type RecordingView, type StartRecordingBody } from '@tally/contracts';
import type { Recording, Stream } from '@tally/db';
import { type EgressRequest, LivekitEgressClient, LivekitRoomClient, type ParticipantSummary } from '@tally/livekit';
import { NodeWorkers, WorkerNotReadyError } from '@tally/nodes';
import {
  extensionFor,
  PassthroughEgresses,
  type PassthroughSource,
  passthroughExtension,
  RecordingLifecycle,
  RecordingStopper,
  toRecordingView,
} from '@tally/recordings';
import { AppStorage } from '../tenancy/app-storage.js';
import { AppsRepository } from '../tenancy/apps.repository.js';
import { refusalError } from '../capacity/refusal.js';
import { Clock } from '../common/clock.js';
import { DomainError, NotFoundError, UpstreamUnavailableError } from '../common/domain-error.js';
import { StreamsService } from '../streams/streams.service.js';
import { RecordingStorage } from './recording-storage.js';
import { RecordingsRepository } from './recordings.repository.js';

/** Egress has this long to report the recording started before its reservation lapses (Chrome takes ~10 s). */
const START_LAPSE_MS = 120_000;
const DEFAULT_LAYOUT = 'grid';
/** How long a start waits for the node's egress worker when none runs yet (Chrome's warm pool takes a few seconds). */
const WORKER_READY_TIMEOUT_MS = 60_000;

type Admission = Readonly<{ candidate: ModeCandidate; nodeId: string; reason: string }>;

@Injectable()
export class RecordingsService {
  constructor(
    private readonly recordings: RecordingsRepository,
    private readonly apps: AppsRepository,
    private readonly streams: StreamsService,
    private readonly admitter: Admitter,
    private readonly rooms: LivekitRoomClient,
    private readonly egress: LivekitEgressClient,
    private readonly lifecycle: RecordingLifecycle,
    private readonly storage: RecordingStorage,
    private readonly workers: NodeWorkers,
    private readonly passthrough: PassthroughEgresses,
    private readonly stopper: RecordingStopper,
    private readonly clock: Clock,
    private readonly appStorage: AppStorage,
  ) {}

  /**
   * Picks the mode from what the room publishes (or the app's forced mode), admits it against the
   * app's quota and a node's budget, and only then asks LiveKit for the egress. The recording id is
   * the reservation id; egress_started confirms it, egress_ended gives it back.
   */
  async start(appId: string, streamId: string, body: StartRecordingBody): Promise<RecordingView> {
    const app = await this.apps.find(appId);
    if (!app) throw new NotFoundError('app');
    const stream = await this.streams.require(appId, streamId);
    if (stream.status === 'ended') throw new DomainError('conflict', 'the stream has ended', { streamStatus: stream.status });
    await this.appStorage.requireRoomToRecord(appId, app);

    const publishers = (await this.participants(stream)).filter((p) => p.tracks.length > 0);
    const tracks = publishers.flatMap((p) => p.tracks);
    const videoMimeType = tracks.find((t) => t.kind === 'video')?.mimeType;
    const shape: RecordingShape = {
      publishers: publishers.length,
      videoTracks: tracks.filter((t) => t.kind === 'video').length,
      audioTracks: tracks.filter((t) => t.kind === 'audio').length,
      ...(body.layout === undefined ? {} : { layout: body.layout }),
      ...(videoMimeType === undefined ? {} : { videoMimeType }),
    };
    const options = recordingCandidates(this.admitter.model, shape, {
      mode: body.mode === 'auto' ? app.recordingMode : body.mode,
      forcedBy: body.mode === 'auto' ? "the app's setting" : 'the request',
      allowFallback: app.recordingFallback,
      format: app.recordingFormat,
    });
    if (!options.ok) throw new DomainError('conflict', options.reason, { field: 'mode' });

    const id = newId('rec');
    const admission = await this.admit(id, appId, options.candidates);
    const mode = admission.candidate.mode;
    const request = mode === 'passthrough' ? undefined : this.egressRequest(admission.candidate, stream, publishers, body.layout);
    const extension =
      mode === 'passthrough' ? passthroughExtension(videoMimeType) : extensionFor(mode, mode === 'track' ? tracks[0]?.mimeType : undefined);
    const location = this.storage.files.location(appId, id, extension);

    const recording = await this.recordings.create({
      id,
      appId,
      streamId,
      mode: admission.candidate.mode,
      reason: admission.reason,
      layout: request?.mode === 'room_composite' ? request.layout : undefined,
      nodeId: admission.nodeId,
      storage: 'local',
      location,
    });
    try {
      // On a node whose agent runs egress on demand, the first recording starts it (a few seconds).
      await this.workers.ensureReady(admission.nodeId, 'egress', { timeoutMs: WORKER_READY_TIMEOUT_MS });
      if (request) {
        const egress = await this.egress.start(request, this.storage.destination(location));
        await this.recordings.setEgress(id, egress.egressId);
        await this.lifecycle.applyEgress(egress, this.clock.now());
      } else {
        await this.passthrough.start(recording, stream.room, passthroughSources(tracks), this.clock.now());
      }
    } catch (error) {
      await this.lifecycle.fail(id, `egress could not start: ${error instanceof Error ? error.message : String(error)}`, this.clock.now());
      throw new UpstreamUnavailableError(error instanceof WorkerNotReadyError ? 'egress worker' : 'livekit egress', error);
    }
    return toRecordingView((await this.recordings.find(appId, id)) ?? recording);
  }

  /** Asks egress to finish the file; the recording completes when egress_ended arrives and the file is checked. */
  async stop(appId: string, recordingId: string): Promise<RecordingView> {
    const recording = await this.require(appId, recordingId);
    await this.lifecycle.noteEndReason(recording.id, 'stopped');
    await this.stopper.stop(recording, this.clock.now());
    return toRecordingView(await this.require(appId, recordingId));
  }

  async list(appId: string, query: RecordingListQuery): Promise<RecordingView[]> {
    if (!(await this.apps.find(appId))) throw new NotFoundError('app');
    return (await this.recordings.list(appId, query)).map(toRecordingView);
  }

  async get(appId: string, recordingId: string): Promise<RecordingView> {
    return toRecordingView(await this.require(appId, recordingId));
  }

  async require(appId: string, recordingId: string): Promise<Recording> {
    const recording = await this.recordings.find(appId, recordingId);
    if (!recording) throw new NotFoundError('recording');
    return recording;
  }

  /**
   * Who publishes in the stream's room. Nobody, when nothing has needed the room yet (no token, no
   * ingress): LiveKit lists no one for a room that does not exist, so the room is made sure of then,
   * for a recording that waits in it for somebody to join.
   */
  private async participants(stream: Stream): Promise<ParticipantSummary[]> {
    let participants: ParticipantSummary[];
    try {
      participants = await this.rooms.listParticipants(stream.room);
    } catch (error) {
      throw new UpstreamUnavailableError('livekit', error);
    }
    if (participants.length === 0) await this.streams.roomReady(stream.room);
    return participants;
  }

  /** Tries each candidate mode in order; the first refusal is the one reported (it names what the chosen mode lacked). */
  private async admit(id: string, appId: string, candidates: readonly ModeCandidate[]): Promise<Admission> {
    let firstRefusal: Refusal | undefined;
    for (const candidate of candidates) {
      const admitted = await this.admitter.admit(id, appId, egressKindOf(candidate.mode), 1, START_LAPSE_MS);
      if (admitted.ok) {
        const reason =
          firstRefusal && candidate.fellBackFrom
            ? candidate.reason.replace(
                `${candidate.fellBackFrom} refused`,
                `${candidate.fellBackFrom} refused: ${explainRefusal(firstRefusal)}`,
              )
            : candidate.reason;
        return { candidate, nodeId: admitted.nodeId, reason };
      }
      firstRefusal ??= admitted.refusal;
    }
    if (!firstRefusal) throw new Error('no recording mode to admit');
    throw refusalError(firstRefusal);
  }

  private egressRequest(
    candidate: ModeCandidate,
    stream: Stream,
    publishers: ParticipantSummary[],
    layout: string | undefined,
  ): EgressRequest {
    const tracks = publishers.flatMap((p) => p.tracks);
    switch (candidate.mode) {
      case 'room_composite':
        return { mode: 'room_composite', room: stream.room, layout: layout ?? DEFAULT_LAYOUT };
      case 'track_composite':
        return {
          mode: 'track_composite',
          room: stream.room,
          videoTrackSid: tracks.find((t) => t.kind === 'video')?.sid,
          audioTrackSid: tracks.find((t) => t.kind === 'audio')?.sid,
        };
      case 'track': {
        const track = tracks[0];
        if (!track) throw new DomainError('conflict', 'track recording needs a published track', { field: 'mode' });
        return { mode: 'track', room: stream.room, trackSid: track.sid };
      }
      case 'passthrough':
        throw new Error('passthrough starts one Track egress per track');
    }
  }
}

/** The single publisher's tracks, at most one of each kind (the mode's precondition). */
function passthroughSources(tracks: readonly ParticipantSummary['tracks'][number][]): PassthroughSource[] {
  const video = tracks.find((t) => t.kind === 'video');
  const audio = tracks.find((t) => t.kind === 'audio');
  return [
    ...(video ? [{ track: 'video' as const, sid: video.sid, mimeType: video.mimeType }] : []),
    ...(audio ? [{ track: 'audio' as const, sid: audio.sid, mimeType: audio.mimeType }] : []),
  ];
}

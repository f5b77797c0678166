import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import { egressKindOf } from '@tally/capacity';
import { CONFIG, type Config } from '@tally/config';
import { type HlsMode, type HlsView, hlsSegmentS, newId, type StartHlsBody } from '@tally/contracts';
import type { Stream } from '@tally/db';
import { type EgressRequest, LivekitEgressClient, LivekitRoomClient, type ParticipantSummary } from '@tally/livekit';
import { HlsLifecycle } from '@tally/streams';
import { refusalError } from '../capacity/refusal.js';
import { Clock } from '../common/clock.js';
import { DomainError, NotFoundError, UpstreamUnavailableError } from '../common/domain-error.js';
import { StreamsService } from '../streams/streams.service.js';
import { toHlsView } from './hls.view.js';
import { HlsRepository } from './hls.repository.js';

/** Egress has this long to start before the session's reservation lapses; a successful start confirms it. */
const START_LAPSE_MS = 120_000;
const LAYOUT = 'grid';
const ALREADY_OPEN = () => new DomainError('conflict', 'the stream already has live HLS');

/**
 * Live HLS of a stream through a segmented egress, admitted like a recording (app.recordings and an
 * egress budget on a node). The session id is the reservation id.
 */
@Injectable()
export class HlsService {
  constructor(
    private readonly sessions: HlsRepository,
    private readonly lifecycle: HlsLifecycle,
    private readonly streams: StreamsService,
    private readonly admitter: Admitter,
    private readonly ledger: CapacityLedger,
    private readonly rooms: LivekitRoomClient,
    private readonly egress: LivekitEgressClient,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async start(appId: string, streamId: string, body: StartHlsBody): Promise<HlsView> {
    const stream = await this.streams.require(appId, streamId);
    if (stream.status === 'ended') throw new DomainError('conflict', 'the stream has ended', { streamStatus: stream.status });
    if (await this.sessions.open(appId, streamId)) throw ALREADY_OPEN();
    const publishers = (await this.participants(stream)).filter((p) => p.tracks.length > 0);
    if (publishers.length === 0) throw new DomainError('conflict', 'nothing is published in the stream yet');
    const request = egressRequest(stream, publishers, body.audio);

    const id = newId('hls');
    const admitted = await this.admitter.admit(id, appId, egressKindOf(request.mode), 1, START_LAPSE_MS, { diskRole: 'hls' });
    if (!admitted.ok) throw refusalError(admitted.refusal);
    const segmentS = hlsSegmentS(body);
    const dir = join(this.config.hls.dir, appId, streamId, id);
    const session = await this.sessions.create({
      id,
      appId,
      streamId,
      mode: request.mode,
      preset: body.preset,
      segmentS,
      audio: !request.videoOnly,
      nodeId: admitted.nodeId,
      dir,
      // Unguessable: players and CDNs reach the segments by this alone, without a key.
      publicId: randomBytes(16).toString('hex'),
    });
    if (!session) {
      await this.ledger.release(id);
      throw ALREADY_OPEN();
    }
    try {
      // Made here, not by egress: in the shared HLS directory what tally creates stays writable by
      // the group, so the worker's HLS sweep can delete the segments egress (the media user) writes into it.
      await mkdir(dir, { recursive: true });
      const egress = await this.egress.startSegments(request, { dir, segmentS });
      await this.lifecycle.egressStarted(id, egress.egressId);
    } catch (error) {
      await this.lifecycle.fail(session, `egress could not start: ${String(error)}`, this.clock.now());
      throw new UpstreamUnavailableError('livekit egress', error);
    }
    return toHlsView({ ...session, status: 'starting' }, this.config.http.publicUrl);
  }

  async get(appId: string, streamId: string): Promise<HlsView> {
    await this.streams.require(appId, streamId);
    const session = await this.sessions.latest(appId, streamId);
    if (!session) throw new NotFoundError('HLS session');
    return toHlsView(session, this.config.http.publicUrl);
  }

  /** Ends the egress; the segments stay servable for the retention period, then the worker's HLS sweep deletes them. */
  async stop(appId: string, streamId: string): Promise<HlsView> {
    await this.streams.require(appId, streamId);
    const session = await this.sessions.open(appId, streamId);
    if (!session) return this.get(appId, streamId);
    await this.lifecycle.finish(session, this.clock.now());
    return this.get(appId, streamId);
  }

  /** Who publishes in the stream's room, which is created first if nothing has needed it yet (nobody then). */
  private async participants(stream: Stream): Promise<ParticipantSummary[]> {
    await this.streams.roomReady(stream.room);
    try {
      return await this.rooms.listParticipants(stream.room);
    } catch (error) {
      throw new UpstreamUnavailableError('livekit', error);
    }
  }
}

/** One publisher with at most one video and one audio track needs no browser; anything else is composed. */
function egressRequest(
  stream: Stream,
  publishers: readonly ParticipantSummary[],
  audio: boolean,
): Extract<EgressRequest, { mode: HlsMode }> & { videoOnly: boolean } {
  const only = publishers.length === 1 ? publishers[0] : undefined;
  const video = only?.tracks.filter((t) => t.kind === 'video') ?? [];
  const sound = only?.tracks.filter((t) => t.kind === 'audio') ?? [];
  if (only && video.length <= 1 && sound.length <= 1) {
    return {
      mode: 'track_composite',
      room: stream.room,
      videoTrackSid: video[0]?.sid,
      audioTrackSid: audio ? sound[0]?.sid : undefined,
      videoOnly: !audio && video.length === 1,
    };
  }
  return { mode: 'room_composite', room: stream.room, layout: LAYOUT, videoOnly: !audio };
}

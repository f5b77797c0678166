import { Inject, Injectable, Logger } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import type { CreateStreamBody, StreamStatus, StreamView } from '@tally/contracts';
import type { Stream } from '@tally/db';
import { LivekitRoomClient } from '@tally/livekit';
import { roomName, StreamLifecycle } from '@tally/streams';
import { toStreamView } from '@tally/webhooks';
import { LiveApps } from '../tenancy/live-apps.js';
import { Clock } from '../common/clock.js';
import { refusalError } from '../capacity/refusal.js';
import { DomainError, NotFoundError, UpstreamUnavailableError } from '../common/domain-error.js';
import { newId } from '../common/ids.js';
import { StreamRooms } from './stream-rooms.js';
import { StreamsRepository } from './streams.repository.js';

/** An unconfirmed reservation outlives LiveKit's own empty-room timeout by this much, so a lost webhook cannot leak it. */
const SLOT_GRACE_S = 60;

@Injectable()
export class StreamsService {
  private readonly logger = new Logger(StreamsService.name);

  constructor(
    private readonly streams: StreamsRepository,
    private readonly lifecycle: StreamLifecycle,
    private readonly apps: LiveApps,
    private readonly admitter: Admitter,
    private readonly ledger: CapacityLedger,
    private readonly livekit: LivekitRoomClient,
    private readonly rooms: StreamRooms,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * Admits the stream (app quota and node budget, atomically) before anything is created; a refusal
   * is a 429 naming `app.streams` or the node resource that ran out. The stream id is the reservation
   * id. LiveKit is not called: the room is created by the first thing that needs it (StreamRooms).
   */
  async create(appId: string, body: CreateStreamBody): Promise<StreamView> {
    if (!(await this.apps.exists(appId))) throw new NotFoundError('app');
    const id = newId('str');
    const joinTimeoutS = this.config.streams.joinTimeoutS;

    const admission = await this.admitter.admit(id, appId, 'stream', 1, (joinTimeoutS + SLOT_GRACE_S) * 1000);
    if (!admission.ok) throw refusalError(admission.refusal);

    const room = roomName(appId, id);
    try {
      return toStreamView(await this.streams.create({ id, appId, name: body.name, room, createdAt: this.clock.now() }));
    } catch (error) {
      await this.ledger.release(id);
      throw error;
    }
  }

  async list(appId: string, status: StreamStatus | undefined): Promise<StreamView[]> {
    return (await this.streams.list(appId, status)).map(toStreamView);
  }

  async get(appId: string, streamId: string): Promise<StreamView> {
    return toStreamView(await this.require(appId, streamId));
  }

  /**
   * Marks the stream ended and gives the reservation back, then removes the LiveKit room
   * (disconnecting everyone). Ended first, so nothing creates the room again once it is removed
   * (StreamRooms); a room LiveKit could not remove now is removed by the worker's sweep, which
   * deletes every stream room with no open stream. Ending twice is harmless.
   */
  async end(appId: string, streamId: string): Promise<StreamView> {
    const stream = await this.require(appId, streamId);
    if (stream.status !== 'ended') await this.endAndRemoveRoom(stream, 'ended_by_api');
    return this.get(appId, streamId);
  }

  async endAll(appId: string, reason: string): Promise<void> {
    for (const stream of await this.streams.listOpen(appId)) await this.endAndRemoveRoom(stream, reason);
  }

  private async endAndRemoveRoom(stream: Stream, reason: string): Promise<void> {
    await this.finish(stream, reason);
    await this.rooms.settled(stream.room);
    await this.livekit.deleteRoom(stream.room).catch((error: unknown) => {
      this.logger.warn(`could not remove room ${stream.room} (the sweep removes it): ${String(error)}`);
    });
  }

  /** Whether the room is known to exist here: roomReady would resolve at once. */
  isRoomReady(room: string): boolean {
    return this.rooms.isReady(room);
  }

  /**
   * Resolves once the stream's LiveKit room exists, creating it the first time (before anyone or
   * anything is let into it); 503 when LiveKit could not create it (the stream stays open: a retry asks again).
   */
  async roomReady(room: string): Promise<void> {
    try {
      await this.rooms.ready(room);
    } catch (error) {
      if (error instanceof DomainError) throw error;
      throw new UpstreamUnavailableError('livekit', error);
    }
  }

  async require(appId: string, streamId: string): Promise<Stream> {
    const stream = await this.streams.find(appId, streamId);
    if (!stream) throw new NotFoundError('stream');
    return stream;
  }

  /** The row changes before the reservation is released (StreamLifecycle.end). */
  async finish(stream: Stream, reason: string): Promise<void> {
    await this.lifecycle.end(stream.id, this.clock.now(), reason);
  }
}

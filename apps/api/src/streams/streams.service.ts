import { Inject, Injectable, Logger } from '@nestjs/common';
import { SlotLedger } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import type { CreateStreamBody, StreamStatus, StreamView } from '@tally/contracts';
import type { Stream } from '@tally/db';
import { LivekitRoomClient } from '@tally/livekit';
import { AppsRepository } from '../apps/apps.repository.js';
import { Clock } from '../common/clock.js';
import { NotFoundError, QuotaExceededError, UpstreamUnavailableError } from '../common/domain-error.js';
import { newId } from '../common/ids.js';
import { StreamsRepository } from './streams.repository.js';
import { roomName, toStreamView } from './stream.view.js';

/** A room LiveKit closes once its last participant has been gone this long. */
const DEPARTURE_TIMEOUT_S = 30;
/** An unconfirmed slot outlives LiveKit's own empty-room timeout by this much, so a lost webhook cannot leak it. */
const SLOT_GRACE_S = 60;

@Injectable()
export class StreamsService {
  private readonly logger = new Logger(StreamsService.name);

  constructor(
    private readonly streams: StreamsRepository,
    private readonly apps: AppsRepository,
    private readonly slots: SlotLedger,
    private readonly livekit: LivekitRoomClient,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /** Takes a stream slot atomically before anything is created; over quota is a 429 naming `app.streams`. */
  async create(appId: string, body: CreateStreamBody): Promise<StreamView> {
    const app = await this.apps.find(appId);
    if (!app) throw new NotFoundError('app');
    const limit = app.maxStreams ?? this.config.streams.defaultMaxStreams;
    const id = newId('str');
    const joinTimeoutS = this.config.streams.joinTimeoutS;

    const reservation = await this.slots.reserve(appId, 'streams', id, limit, (joinTimeoutS + SLOT_GRACE_S) * 1000);
    if (!reservation.granted) {
      throw new QuotaExceededError({ resource: 'app.streams', limit, used: reservation.used, requested: 1 });
    }

    const room = roomName(appId, id);
    let stream: Stream;
    try {
      stream = await this.streams.create({ id, appId, name: body.name, room });
    } catch (error) {
      await this.slots.release(appId, 'streams', id);
      throw error;
    }
    try {
      await this.livekit.createRoom(room, { emptyTimeoutS: joinTimeoutS, departureTimeoutS: DEPARTURE_TIMEOUT_S });
    } catch (error) {
      await this.finish(stream, 'livekit_unavailable');
      throw new UpstreamUnavailableError('livekit', error);
    }
    return toStreamView(stream);
  }

  async list(appId: string, status: StreamStatus | undefined): Promise<StreamView[]> {
    return (await this.streams.list(appId, status)).map(toStreamView);
  }

  async get(appId: string, streamId: string): Promise<StreamView> {
    return toStreamView(await this.require(appId, streamId));
  }

  /** Removes the LiveKit room (disconnecting everyone) and frees the slot. Ending twice is harmless. */
  async end(appId: string, streamId: string): Promise<StreamView> {
    const stream = await this.require(appId, streamId);
    if (stream.status !== 'ended') {
      try {
        await this.livekit.deleteRoom(stream.room);
      } catch (error) {
        throw new UpstreamUnavailableError('livekit', error);
      }
      await this.finish(stream, 'ended_by_api');
    }
    return this.get(appId, streamId);
  }

  async endAll(appId: string, reason: string): Promise<void> {
    for (const stream of await this.streams.listOpen(appId)) {
      await this.livekit.deleteRoom(stream.room).catch((error: unknown) => {
        this.logger.warn(`could not remove room ${stream.room}: ${String(error)}`);
      });
      await this.finish(stream, reason);
    }
  }

  async require(appId: string, streamId: string): Promise<Stream> {
    const stream = await this.streams.find(appId, streamId);
    if (!stream) throw new NotFoundError('stream');
    return stream;
  }

  /** The row changes before the slot is freed: a crash in between holds a slot too long (the sweep frees it), never frees one too early. */
  async finish(stream: Stream, reason: string): Promise<void> {
    await this.streams.markEnded(stream.id, this.clock.now(), reason);
    await this.slots.release(stream.appId, 'streams', stream.id);
  }
}

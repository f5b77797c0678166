import { type BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { LivekitRoomClient } from '@tally/livekit';
import { DomainError } from '../common/domain-error.js';
import { StreamsRepository } from './streams.repository.js';

/** A room LiveKit closes once its last participant has been gone this long. */
const DEPARTURE_TIMEOUT_S = 30;
/** Rooms this process remembers as existing; an older one is simply asked for again (idempotently). */
const MAX_KNOWN = 10_000;

/**
 * The LiveKit room behind each stream, created when something first needs it: a join token, an
 * ingress, a recording or an HLS session. Creating a stream admits it and stores it, and never
 * waits for LiveKit, so a burst of stream creates is not held to the rate at which LiveKit makes
 * rooms, and a stream nobody joins costs LiveKit nothing. LiveKit runs with `room.auto_create` off,
 * so nobody can join a room before Tally created it. Concurrent callers share one CreateRoom; a
 * replica that did not create the room asks LiveKit again (CreateRoom returns the existing room),
 * once per room.
 *
 * A room exists only while its stream is open. Ending a stream marks it ended before it deletes the
 * room, and every creation here reads the stream again once LiveKit has made the room: if it ended
 * meanwhile, the room is deleted again and the caller refused (409). Either the read came before
 * the end's mark, and the end's delete comes after this creation, or it came after, and this
 * creation deletes what it made: no token minted while a stream ends brings its room back.
 */
@Injectable()
export class StreamRooms implements BeforeApplicationShutdown {
  private readonly creating = new Map<string, Promise<void>>();
  private readonly known = new Set<string>();
  private readonly logger = new Logger(StreamRooms.name);

  constructor(
    private readonly livekit: LivekitRoomClient,
    private readonly streams: StreamsRepository,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /** Whether this process has seen the room exist (ready would resolve at once). */
  isReady(room: string): boolean {
    return this.known.has(room);
  }

  /**
   * Resolves once the room exists, creating it if this process has not seen it; rejects with
   * StreamEndedError when the stream ended meanwhile, else when LiveKit could not create it.
   */
  ready(room: string): Promise<void> {
    if (this.known.has(room)) return Promise.resolve();
    const inFlight = this.creating.get(room);
    if (inFlight) return inFlight;
    const creating = this.create(room).then(
      () => {
        this.creating.delete(room);
        if (this.known.size >= MAX_KNOWN) this.known.delete(this.known.values().next().value!);
        this.known.add(room);
      },
      (error: unknown) => {
        // Nothing is remembered of a failed creation: the next caller asks again.
        this.creating.delete(room);
        throw error;
      },
    );
    this.creating.set(room, creating);
    return creating;
  }

  /** A stopping API finishes the creations it started before Prisma closes, so no caller waits on one nobody finishes. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.creating.values()]);
  }

  /** Waits for a creation in flight here to end, either way, and forgets the room (before it is removed). */
  async settled(room: string): Promise<void> {
    await this.creating.get(room)?.catch(() => undefined);
    this.known.delete(room);
  }

  private async create(room: string): Promise<void> {
    await this.livekit.createRoom(room, { emptyTimeoutS: this.config.streams.joinTimeoutS, departureTimeoutS: DEPARTURE_TIMEOUT_S });
    const stream = await this.streams.findByRoom(room);
    if (stream && stream.status !== 'ended') return;
    // Not remembered as existing: it is gone again (or the worker's sweep removes it).
    await this.livekit.deleteRoom(room).catch((error: unknown) => this.logger.warn(`could not remove room ${room}: ${String(error)}`));
    throw new StreamEndedError();
  }
}

/** The stream behind a room ended while the room was being created: 409, as for a stream already ended. */
export class StreamEndedError extends DomainError {
  constructor() {
    super('conflict', 'the stream has ended');
  }
}

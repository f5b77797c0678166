import { type BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { LivekitRoomClient } from '@tally/livekit';

/** A room LiveKit closes once its last participant has been gone this long. */
const DEPARTURE_TIMEOUT_S = 30;
/** Rooms this process remembers as existing; an older one is simply asked for again (idempotently). */
const MAX_KNOWN = 10_000;
/**
 * Creations left in the background at most: beyond this (LiveKit slower than streams are created)
 * a new stream waits for its own room, so the backlog, and a token's wait for its room, stay bounded.
 */
const MAX_IN_BACKGROUND = 64;

/**
 * The LiveKit room behind each stream. Creating a stream does not wait for LiveKit's CreateRoom:
 * the room is created in the background, and everything that lets a participant or a worker into
 * it (a join token, an ingress) first waits for `ready`. LiveKit runs with `room.auto_create` off,
 * so nobody can join a room before it exists. A replica that did not start the creation asks
 * LiveKit again (CreateRoom returns the existing room), once per room.
 */
@Injectable()
export class StreamRooms implements BeforeApplicationShutdown {
  private readonly logger = new Logger(StreamRooms.name);
  private readonly creating = new Map<string, Promise<void>>();
  private readonly known = new Set<string>();

  constructor(
    private readonly livekit: LivekitRoomClient,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * Starts creating the room; when LiveKit fails, `onFailure` runs (ending the stream) and `ready`
   * rejects. Resolves at once, unless too many creations are in flight: then once the room exists.
   */
  open(room: string, onFailure: (error: unknown) => Promise<void>): Promise<void> {
    const backlog = this.creating.size;
    const creating = this.create(room).catch(async (error: unknown) => {
      this.logger.warn(`could not create room ${room}: ${String(error)}`);
      await onFailure(error).catch((failure: unknown) => this.logger.error(`could not end the stream of room ${room}: ${String(failure)}`));
      throw error;
    });
    const tracked = this.track(room, creating);
    return backlog < MAX_IN_BACKGROUND ? Promise.resolve() : tracked;
  }

  /** Resolves once the room exists; rejects when LiveKit could not create it. */
  ready(room: string): Promise<void> {
    if (this.known.has(room)) return Promise.resolve();
    return this.creating.get(room) ?? this.track(room, this.create(room));
  }

  /**
   * A stopping API finishes the rooms it started creating (and ends the streams LiveKit refused)
   * before Prisma closes, so a stream it answered 201 for never waits on a creation nobody finishes.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.creating.values()]);
  }

  /** Waits for a creation in flight here to end, either way (before the room is removed). */
  async settled(room: string): Promise<void> {
    await this.creating.get(room)?.catch(() => undefined);
    this.known.delete(room);
  }

  private create(room: string): Promise<void> {
    return this.livekit.createRoom(room, { emptyTimeoutS: this.config.streams.joinTimeoutS, departureTimeoutS: DEPARTURE_TIMEOUT_S });
  }

  private track(room: string, creating: Promise<void>): Promise<void> {
    const tracked = creating.then(
      () => {
        if (this.creating.get(room) !== tracked) return;
        this.creating.delete(room);
        if (this.known.size >= MAX_KNOWN) this.known.delete(this.known.values().next().value!);
        this.known.add(room);
      },
      (error: unknown) => {
        if (this.creating.get(room) === tracked) this.creating.delete(room);
        throw error;
      },
    );
    // Nobody may be waiting yet: the failure is handled in `open`, and `ready` reports it to its callers.
    tracked.catch(() => undefined);
    this.creating.set(room, tracked);
    return tracked;
  }
}

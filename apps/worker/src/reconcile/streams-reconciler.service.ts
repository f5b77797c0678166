import { Inject, Injectable, Logger } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import type { Stream } from '@tally/db';
import { LivekitRoomClient } from '@tally/livekit';
import { STREAM_ROOM, StreamLifecycle } from '@tally/streams';
import { NodeAbsence } from './node-absence.js';
import { ReconcileRepository } from './reconcile.repository.js';
import type { RedisLoss } from './redis-loss.js';

const SETTLE_MS = 10_000;

export type ReconcileReport = Readonly<{
  endedRoomGone: number;
  endedNeverJoined: number;
  strayRoomsDeleted: number;
  reservationsFreed: number;
  reservationsRestored: number;
}>;

/**
 * LiveKit drops webhooks under load, so streams and reservations are compared
 * with the rooms LiveKit really has and the nodes that are alive, and repaired.
 */
@Injectable()
export class StreamsReconciler {
  private readonly logger = new Logger(StreamsReconciler.name);

  constructor(
    private readonly repository: ReconcileRepository,
    private readonly streams: StreamLifecycle,
    private readonly ledger: CapacityLedger,
    private readonly admitter: Admitter,
    private readonly absence: NodeAbsence,
    private readonly livekit: LivekitRoomClient,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * `loss`: when Redis last lost its data. LiveKit lists a room again only once it
   * changes, so a stream created before then is not ended for its room missing from the list.
   */
  async run(now: Date, loss?: RedisLoss): Promise<ReconcileReport> {
    const forgottenBefore = loss?.lostAt;
    const rooms = new Map((await this.livekit.listRooms()).map((room) => [room.name, room]));
    const open = await this.repository.openStreams();
    let endedRoomGone = 0;
    let endedNeverJoined = 0;
    const stillOpen: Stream[] = [];

    for (const stream of open) {
      const room = rooms.get(stream.room);
      // A stream nobody joined may have no room yet: the API creates it for the first token, ingress or recording.
      if (this.neverJoined(stream, room?.participants ?? 0, now)) {
        // Ended before its room is removed, as the API does: a room made meanwhile is removed by its maker.
        if (await this.end(stream, now, 'join_timeout')) endedNeverJoined += 1;
        await this.livekit.deleteRoom(stream.room);
      } else if (
        !room &&
        stream.status === 'live' &&
        this.settled(stream, now) &&
        !(forgottenBefore && stream.createdAt < forgottenBefore)
      ) {
        if (await this.end(stream, now, 'room_gone')) endedRoomGone += 1;
      } else {
        stillOpen.push(stream);
      }
    }
    const strayRoomsDeleted = await this.deleteStrayRooms([...rooms.keys()], new Set(open.map((s) => s.room)));
    const { freed, restored } = await this.repairReservations(stillOpen);
    const report = { endedRoomGone, endedNeverJoined, strayRoomsDeleted, reservationsFreed: freed, reservationsRestored: restored };
    if (Object.values(report).some((n) => n > 0)) this.logger.log(`repaired ${JSON.stringify(report)}`);
    return report;
  }

  /**
   * A stream's room exists only while the stream is open: a stream room with no open stream (one
   * LiveKit could not remove when its stream ended, or one made behind Tally's back) is removed,
   * disconnecting whoever is in it. Rooms were listed before the streams were read, and a room is
   * only ever created after its stream's row, so a stream that opened meanwhile is among `open`.
   */
  private async deleteStrayRooms(listed: readonly string[], open: ReadonlySet<string>): Promise<number> {
    let deleted = 0;
    for (const room of listed) {
      if (!STREAM_ROOM.test(room) || open.has(room)) continue;
      try {
        await this.livekit.deleteRoom(room);
        deleted += 1;
      } catch (error) {
        this.logger.warn(`could not remove stray room ${room}: ${String(error)}`);
      }
    }
    return deleted;
  }

  private end(stream: Stream, now: Date, reason: string): Promise<boolean> {
    return this.streams.end(stream.id, now, reason);
  }

  /** A stream that went live this recently may not be listed by every LiveKit node yet: it is not judged yet. */
  private settled(stream: Stream, now: Date): boolean {
    return now.getTime() - (stream.startedAt ?? stream.createdAt).getTime() > SETTLE_MS;
  }

  private neverJoined(stream: Stream, participants: number, now: Date): boolean {
    const deadline = stream.createdAt.getTime() + this.config.streams.joinTimeoutS * 1000;
    return stream.status === 'created' && participants === 0 && now.getTime() > deadline;
  }

  /**
   * Reservations follow the truth: those on nodes whose heartbeat expired and confirmed stream
   * reservations with no open stream are released; open streams that lost theirs get one back.
   * Unconfirmed reservations are left alone: their row may still be being written, and they lapse.
   */
  private async repairReservations(open: Stream[]): Promise<{ freed: number; restored: number }> {
    const { live: liveNodes, absenceMeansGone } = await this.absence.pool();
    const openIds = new Set(open.map((s) => s.id));
    const held = await this.ledger.list();
    let freed = 0;
    for (const r of held) {
      // Right after a Redis failover a node's heartbeat may not be back yet: its work is not gone.
      const leaked = (absenceMeansGone && !liveNodes.has(r.nodeId)) || (r.kind === 'stream' && r.confirmed && !openIds.has(r.id));
      if (leaked && (await this.ledger.release(r.id))) freed += 1;
    }
    const heldOn = new Map(held.map((r) => [r.id, r.nodeId]));
    let restored = 0;
    for (const stream of open) {
      if (liveNodes.has(heldOn.get(stream.id) ?? '') || (heldOn.has(stream.id) && !absenceMeansGone)) continue;
      if (await this.admitter.restore(stream.id, stream.appId, 'stream', 1)) restored += 1;
    }
    return { freed, restored };
  }
}

import { Inject, Injectable, Logger } from '@nestjs/common';
import { SlotLedger } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import type { Stream } from '@tally/db';
import { LivekitRoomClient } from '@tally/livekit';
import { ReconcileRepository } from './reconcile.repository.js';

const SETTLE_MS = 10_000;

export type ReconcileReport = Readonly<{ endedRoomGone: number; endedNeverJoined: number; slotsFreed: number; slotsRestored: number }>;

/**
 * LiveKit drops webhooks under load, so streams and slots are compared with
 * the rooms LiveKit really has, and both are repaired.
 */
@Injectable()
export class StreamsReconciler {
  private readonly logger = new Logger(StreamsReconciler.name);

  constructor(
    private readonly repository: ReconcileRepository,
    private readonly slots: SlotLedger,
    private readonly livekit: LivekitRoomClient,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async run(now: Date): Promise<ReconcileReport> {
    const rooms = new Map((await this.livekit.listRooms()).map((room) => [room.name, room]));
    const open = await this.repository.openStreams();
    let endedRoomGone = 0;
    let endedNeverJoined = 0;
    const stillOpen: Stream[] = [];

    for (const stream of open) {
      const room = rooms.get(stream.room);
      if (!room && this.settled(stream, now)) {
        if (await this.end(stream, now, 'room_gone')) endedRoomGone += 1;
      } else if (room && this.neverJoined(stream, room.participants, now)) {
        await this.livekit.deleteRoom(stream.room);
        if (await this.end(stream, now, 'join_timeout')) endedNeverJoined += 1;
      } else {
        stillOpen.push(stream);
      }
    }
    const { freed, restored } = await this.repairSlots(stillOpen);
    const report = { endedRoomGone, endedNeverJoined, slotsFreed: freed, slotsRestored: restored };
    if (Object.values(report).some((n) => n > 0)) this.logger.log(`repaired ${JSON.stringify(report)}`);
    return report;
  }

  /** Same order as the API: the row first, then the slot. */
  private async end(stream: Stream, now: Date, reason: string): Promise<boolean> {
    const ended = await this.repository.markEnded(stream.id, now, reason);
    await this.slots.release(stream.appId, 'streams', stream.id);
    return ended;
  }

  /** A stream younger than this may have its row before its room: it is not judged yet. */
  private settled(stream: Stream, now: Date): boolean {
    return now.getTime() - stream.createdAt.getTime() > SETTLE_MS;
  }

  private neverJoined(stream: Stream, participants: number, now: Date): boolean {
    const deadline = stream.createdAt.getTime() + this.config.streams.joinTimeoutS * 1000;
    return stream.status === 'created' && participants === 0 && now.getTime() > deadline;
  }

  /** Slots follow the open streams: leaked ones are freed, lost ones (a Redis restart) are taken back. */
  private async repairSlots(open: Stream[]): Promise<{ freed: number; restored: number }> {
    let freed = 0;
    let restored = 0;
    for (const appId of await this.repository.appIds()) {
      const wanted = new Set(open.filter((s) => s.appId === appId).map((s) => s.id));
      const held = new Set(await this.slots.confirmedMembers(appId, 'streams'));
      for (const member of held) {
        if (wanted.has(member)) continue;
        await this.slots.release(appId, 'streams', member);
        freed += 1;
      }
      const anyHeld = new Set([...held, ...(await this.slots.unconfirmedMembers(appId, 'streams'))]);
      for (const member of wanted) {
        if (anyHeld.has(member)) continue;
        await this.slots.restore(appId, 'streams', member);
        restored += 1;
      }
    }
    return { freed, restored };
  }
}

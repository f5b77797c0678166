import { Injectable } from '@nestjs/common';
import type { StreamStatus } from '@tally/contracts';
import { Prisma, PrismaService, type Stream } from '@tally/db';
import { toStreamView, WebhookOutbox } from '@tally/webhooks';
import { GroupedWrites } from '../common/grouped-writes.js';
import { CacheInvalidation } from '@tally/runtime';

type Transition = Readonly<{ where: Prisma.StreamWhereInput; data: Prisma.StreamUpdateManyMutationInput }>;

type NewStream = Readonly<{ id: string; appId: string; name: string; room: string; createdAt: Date }>;

/** Stream rows per INSERT at most (5 parameters each, far under Postgres' 65,535). */
const MAX_ROWS_PER_INSERT = 500;

@Injectable()
export class StreamsRepository {
  /**
   * Stream creates arriving together share one INSERT and one commit (the hottest write). Each row
   * is written as SQL, all its columns known here: Prisma's query compiler would otherwise plan the
   * statement again on every create.
   */
  private readonly inserts = new GroupedWrites<NewStream>({
    writeMany: (rows) => this.insert(rows),
    writeOne: (row) => this.insert([row]),
    maxRows: MAX_ROWS_PER_INSERT,
  });

  constructor(
    private readonly prisma: PrismaService,
    private readonly outbox: WebhookOutbox,
    private readonly invalidation: CacheInvalidation,
  ) {}

  /** Resolves once the row is committed. */
  async create(data: NewStream): Promise<Stream> {
    await this.inserts.write(data);
    return { ...data, status: 'created', publishers: 0, participants: 0, startedAt: null, endedAt: null, endReason: null };
  }

  private async insert(rows: readonly NewStream[]): Promise<void> {
    const values = rows.map((r) => Prisma.sql`(${r.id}, ${r.appId}, ${r.name}, ${r.room}, ${r.createdAt})`);
    await this.prisma.$executeRaw`INSERT INTO "Stream" ("id", "appId", "name", "room", "createdAt") VALUES ${Prisma.join(values)}`;
  }

  find(appId: string, streamId: string): Promise<Stream | null> {
    return this.prisma.stream.findFirst({ where: { id: streamId, appId } });
  }

  findByRoom(room: string): Promise<Stream | null> {
    return this.prisma.stream.findUnique({ where: { room } });
  }

  list(appId: string, status: StreamStatus | undefined): Promise<Stream[]> {
    return this.prisma.stream.findMany({
      where: { appId, ...(status === undefined ? {} : { status }) },
      orderBy: { createdAt: 'desc' },
      take: 500,
    });
  }

  listOpen(appId: string): Promise<Stream[]> {
    return this.prisma.stream.findMany({ where: { appId, status: { not: 'ended' } } });
  }

  /** True when this call turned a created stream live; the app's stream.live event is staged with it. */
  markLive(id: string, at: Date, counts: { participants: number; publishers: number }): Promise<boolean> {
    return this.transition({ where: { id, status: 'created' }, data: { status: 'live', startedAt: at, ...counts } }, 'stream.live');
  }

  async setPresence(id: string, counts: { participants: number; publishers: number }): Promise<void> {
    await this.prisma.stream.updateMany({ where: { id, status: { not: 'ended' } }, data: counts });
  }

  /** True when this call ended the stream (it was not ended before); the app's stream.ended event is staged with it. */
  /**
   * Records why an open stream is about to end, before LiveKit is asked to remove its room: the
   * room_finished webhook that may arrive before that call returns then ends it with this reason.
   * Null takes the intent back (LiveKit could not remove the room).
   */
  async markEnded(id: string, at: Date, reason: string): Promise<boolean> {
    const ended = await this.transition(
      {
        where: { id, status: { not: 'ended' } },
        data: { status: 'ended', endedAt: at, endReason: reason, participants: 0, publishers: 0 },
      },
      'stream.ended',
    );
    // Every replica stops minting tokens for it from its cache (StreamCache).
    if (ended) await this.invalidation.publish({ kind: 'stream', streamId: id });
    return ended;
  }

  /** A conditional update and its event in one transaction, so the event exists exactly when the change does. */
  private async transition(change: Transition, event: 'stream.live' | 'stream.ended'): Promise<boolean> {
    const { changed, staged } = await this.prisma.$transaction(async (tx) => {
      const [stream] = await tx.stream.updateManyAndReturn(change);
      if (!stream) return { changed: false, staged: undefined };
      return { changed: true, staged: await this.outbox.stage(tx, stream.appId, event, toStreamView(stream)) };
    });
    await this.outbox.flush([staged]);
    return changed;
  }
}

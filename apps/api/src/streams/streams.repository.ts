import { Injectable } from '@nestjs/common';
import type { StreamStatus } from '@tally/contracts';
import { Prisma, PrismaService, type Stream } from '@tally/db';
import { GroupedWrites } from '../common/grouped-writes.js';

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

  constructor(private readonly prisma: PrismaService) {}

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
}

import { Injectable } from '@nestjs/common';
import type { StreamStatus } from '@tally/contracts';
import { PrismaService, type Stream } from '@tally/db';

@Injectable()
export class StreamsRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(data: { id: string; appId: string; name: string; room: string }): Promise<Stream> {
    return this.prisma.stream.create({ data });
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

  /** True when this call turned a created stream live. */
  async markLive(id: string, at: Date): Promise<boolean> {
    const { count } = await this.prisma.stream.updateMany({ where: { id, status: 'created' }, data: { status: 'live', startedAt: at } });
    return count > 0;
  }

  async setPresence(id: string, counts: { participants: number; publishers: number }): Promise<void> {
    await this.prisma.stream.updateMany({ where: { id, status: { not: 'ended' } }, data: counts });
  }

  /** True when this call ended the stream (it was not ended before). */
  async markEnded(id: string, at: Date, reason: string): Promise<boolean> {
    const { count } = await this.prisma.stream.updateMany({
      where: { id, status: { not: 'ended' } },
      data: { status: 'ended', endedAt: at, endReason: reason, participants: 0, publishers: 0 },
    });
    return count > 0;
  }
}

import type { PrismaClient } from '@tally/db';

/** How far metering's sweeps have gone (docs/adr/0028-usage-metering.md). */
export type CursorId = 'rollup.closed' | 'rollup.changes' | 'sync' | 'export';

export class UsageCursors {
  constructor(private readonly prisma: PrismaClient) {}

  async get(id: CursorId): Promise<Date | undefined> {
    return (await this.prisma.usageCursor.findUnique({ where: { id } }))?.at;
  }

  async set(id: CursorId, value: Date): Promise<void> {
    await this.prisma.usageCursor.upsert({ where: { id }, create: { id, at: value }, update: { at: value } });
  }
}

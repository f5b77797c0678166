import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tally/db';
import type { LivekitEvent } from '@tally/livekit';

/** LiveKit events already applied, so a redelivered event is acknowledged without acting twice. */
@Injectable()
export class LivekitEventsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async seen(eventId: string): Promise<boolean> {
    return (await this.prisma.livekitEvent.count({ where: { id: eventId } })) > 0;
  }

  async record(event: LivekitEvent): Promise<void> {
    await this.prisma.livekitEvent.createMany({
      data: [{ id: event.id, event: event.event, room: event.room ?? null }],
      skipDuplicates: true,
    });
  }
}

import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tally/db';
import { LivekitRoomClient } from '@tally/livekit';
import { RedisConnection } from '../infra/infra.module.js';

/** One cheap round trip to each dependency. */
@Injectable()
export class HealthProbes {
  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisConnection,
    private readonly livekit: LivekitRoomClient,
  ) {}

  async postgres(): Promise<void> {
    await this.prisma.$queryRaw`SELECT 1`;
  }

  async redisPing(): Promise<void> {
    await this.redis.ping();
  }

  async livekitRooms(): Promise<void> {
    await this.livekit.listRooms([]);
  }
}

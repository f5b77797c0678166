import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tally/db';
import { LivekitRoomClient } from '@tally/livekit';
import { RedisConnection } from '../infra/infra.module.js';

/** Not a stream room's name (`app_….str_…`), so no stream's room is ever looked up here. */
const HEALTH_ROOM = 'tally-healthz';

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

  /**
   * An authenticated call that lists at most one room whatever LiveKit holds: an empty name list
   * would list every room on each unauthenticated /healthz.
   */
  async livekitRooms(): Promise<void> {
    await this.livekit.listRooms([HEALTH_ROOM]);
  }
}

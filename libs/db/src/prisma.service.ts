import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/client.js';

const clientOptions = (databaseUrl: string) => ({ adapter: new PrismaPg({ connectionString: databaseUrl }) });

/** A Prisma client for scripts and tests; close it with `$disconnect()`. */
export const createPrismaClient = (databaseUrl: string): PrismaClient => new PrismaClient(clientOptions(databaseUrl));

/**
 * The Prisma client as a Nest provider. Register it with a factory so the URL comes from config:
 * `{ provide: PrismaService, useFactory: (config: AppConfig) => new PrismaService(config.db.url), inject: [AppConfig] }`.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnApplicationShutdown {
  constructor(databaseUrl: string) {
    super(clientOptions(databaseUrl));
  }

  /** The last shutdown phase: the HTTP server has finished its requests and the queue workers their jobs. */
  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
  }
}

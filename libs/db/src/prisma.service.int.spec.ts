import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrismaService, runMigrations, StreamStatus } from './index.js';
import { start, type ThrowawayPostgres } from './migrate/testing/throwaway-postgres.js';

describe(PrismaService.name, () => {
  let postgres: ThrowawayPostgres;
  let sut: PrismaService;

  beforeAll(async () => {
    postgres = await start();
    const url = new URL(postgres.url);
    url.pathname = '/tally';
    await runMigrations(url.toString());
    sut = new PrismaService(url.toString());
  });

  afterAll(async () => {
    await sut?.onModuleDestroy();
    await postgres?.stop();
  });

  it('stores and reads an app with its streams on the migrated schema', async () => {
    await sut.app.create({
      data: { id: 'app_1', name: 'Demo', streams: { create: { id: 'str_1', name: 'Launch', room: 'room-1' } } },
    });

    const app = await sut.app.findUniqueOrThrow({ where: { id: 'app_1' }, include: { streams: true } });

    expect(app.maxStreams).toBeNull();
    expect(app.streams).toMatchObject([{ id: 'str_1', room: 'room-1', status: StreamStatus.created, publishers: 0 }]);
  });
});

import type { INestApplicationContext } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Room } from '@livekit/rtc-node';
import type { AppView, StreamToken, StreamView } from '@tally/contracts';
import { LivekitRoomClient } from '@tally/livekit';
import { ApiClient, startStack, type TestStack } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi } from '../../api/src/bootstrap.js';
import { startWorker } from '../src/bootstrap.js';
import { sweepOnce } from './sweep.js';

const MINTS = 300;

/** A stream's LiveKit room exists only while the stream is open. */
describe('stream rooms', () => {
  let stack: TestStack;
  let api: NestFastifyApplication;
  let worker: INestApplicationContext;
  let admin: ApiClient;
  let livekit: LivekitRoomClient;
  let app: AppView;

  beforeAll(async () => {
    stack = await startStack({ env: { TALLY_SWEEP_INTERVAL_S: '3600' } });
    api = await startApi(stack.config, { logger: false });
    worker = await startWorker(stack.config, { logger: false });
    admin = new ApiClient(`http://127.0.0.1:${stack.config.http.port}`, stack.adminKey);
    livekit = new LivekitRoomClient(stack.config.livekit);
    app = (await admin.post<AppView>('/v1/apps', { name: 'rooms' })).body;
  }, 120_000);

  afterAll(async () => {
    await worker?.close();
    await api?.close();
    await stack?.stop();
  });

  const roomExists = async (room: string) => (await livekit.listRooms([room])).length > 0;

  it('leaves no room behind when publisher tokens are minted while the stream ends, and those tokens join nothing', async () => {
    for (let round = 0; round < 3; round += 1) {
      const stream = (await admin.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: `race ${round}` })).body;
      const mint = () => admin.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'p', role: 'publisher' });
      expect((await mint()).status).toBe(201); // the room exists, and this replica knows it
      // Mints kept in flight before, during and after the DELETE: 30 at a time, 300 in all.
      const answers: Awaited<ReturnType<typeof mint>>[] = [];
      let ended: Promise<Awaited<ReturnType<typeof admin.delete<StreamView>>>> | undefined;
      const minter = async () => {
        while (answers.length < MINTS) {
          answers.push(await mint());
          if (answers.length >= MINTS / 3) ended ??= admin.delete<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`);
        }
      };
      await Promise.all(Array.from({ length: 30 }, minter));
      const end = await ended!;

      expect(end.status).toBe(200);
      expect(end.body.status).toBe('ended');
      // Every mint answered either a token (made before the end) or 409 (after it, or during its room's creation).
      expect(new Set(answers.map((a) => a.status))).toSatisfy((codes: Set<number>) => [...codes].every((c) => c === 201 || c === 409));
      // Every answer is in, so every room creation the mints asked for is over: none may have outlived the end.
      expect(await roomExists(stream.room)).toBe(false);

      const minted = answers.find((a) => a.status === 201)?.body;
      if (minted) {
        const late = new Room();
        const joined = await late.connect(minted.url, minted.token, { autoSubscribe: false, dynacast: false }).then(
          () => true,
          () => false,
        );
        await late.disconnect().catch(() => undefined);
        expect(joined).toBe(false);
        expect(await roomExists(stream.room)).toBe(false);
      }
    }
  }, 180_000);

  it('the sweep removes a stream room made behind Tally’s back and keeps open streams’ rooms and rooms that are not streams’', async () => {
    const open = (await admin.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: 'open' })).body;
    expect((await admin.post(`/v1/apps/${app.id}/streams/${open.id}/tokens`, { identity: 'v', role: 'viewer' })).status).toBe(201);
    const stray = `${app.id}.str_0000000000000000`;
    const ended = (await admin.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: 'ended' })).body;
    await admin.delete(`/v1/apps/${app.id}/streams/${ended.id}`);
    const notAStream = 'operator-test-room';
    for (const room of [stray, ended.room, notAStream]) await livekit.createRoom(room, { emptyTimeoutS: 600, departureTimeoutS: 30 });

    const report = await sweepOnce(admin, stack.redis.url);

    expect(report['streams']?.['strayRoomsDeleted']).toBe(2);
    expect(await roomExists(stray)).toBe(false);
    expect(await roomExists(ended.room)).toBe(false);
    expect(await roomExists(open.room)).toBe(true);
    expect(await roomExists(notAStream)).toBe(true);
  }, 120_000);
});

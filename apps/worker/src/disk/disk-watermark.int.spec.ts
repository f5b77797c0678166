import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { diskWatermarks } from '@tally/capacity';
import { createPrismaClient, type PrismaClient } from '@tally/db';
import { startStack, type TestStack } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../bootstrap.js';
import { DiskStats } from './disk-stats.js';
import { DiskWatermarkCheck, RESERVE_FILE } from './disk-watermark.service.js';

const MB = 1024 * 1024;
const SIZE = 16 * MB;

/** The worker's real check, on a real 16 MB tmpfs holding the recordings and live HLS directories. */
describe(DiskWatermarkCheck.name, () => {
  const mountPoint = mkdtempSync(join(tmpdir(), 'tally-disk-'));
  const recordingsDir = join(mountPoint, 'recordings');
  const hlsDir = join(mountPoint, 'hls');
  let stack: TestStack;
  let worker: INestApplicationContext;
  let prisma: PrismaClient;
  let sut: DiskWatermarkCheck;
  const appId = `app_${randomBytes(8).toString('hex')}`;
  const streamId = `str_${randomBytes(8).toString('hex')}`;

  beforeAll(async () => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${SIZE}`, 'tmpfs', mountPoint]);
    mkdirSync(join(recordingsDir, '.incoming', appId), { recursive: true });
    mkdirSync(hlsDir);
    // The schedule checks once at boot, then every minute: the test runs each check itself.
    stack = await startStack({
      env: {
        TALLY_RECORDINGS_DIR: recordingsDir,
        TALLY_HLS_DIR: hlsDir,
        TALLY_DISK_CHECK_INTERVAL_MS: '60000',
        TALLY_DISK_RESERVE_MAX_MB: '256',
      },
    });
    worker = await startWorker(stack.config, { logger: false });
    sut = worker.get(DiskWatermarkCheck);
    prisma = createPrismaClient(stack.config.databaseUrl);
    await prisma.app.create({ data: { id: appId, name: 'disk' } });
    await prisma.stream.create({ data: { id: streamId, appId, name: 's', room: `${appId}.${streamId}`, status: 'live' } });
  }, 120_000);

  afterAll(async () => {
    await prisma?.$disconnect();
    await worker?.close();
    await stack?.stop();
    execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  /** A passthrough recording egress is writing: two track files of `bytes` each in the incoming area. */
  async function recordingBeingWritten(bytes: number): Promise<string> {
    const id = `rec_${randomBytes(8).toString('hex')}`;
    const location = `${appId}/${id}.webm`;
    await prisma.recording.create({
      data: { id, appId, streamId, mode: 'passthrough', status: 'active', reason: 'test', nodeId: 'node-a', storage: 'local', location },
    });
    for (const [track, ext] of [
      ['video', 'webm'],
      ['audio', 'ogg'],
    ] as const) {
      const part = `${appId}/${id}.${track}.${ext}`;
      writeFileSync(join(recordingsDir, '.incoming', part), Buffer.alloc(bytes, 1));
      await prisma.recordingEgress.create({
        data: {
          recordingId: id,
          track,
          trackSid: `TR_${track}`,
          egressId: `EG_${randomBytes(6).toString('hex')}`,
          state: 'active',
          location: part,
        },
      });
    }
    return id;
  }

  it('holds a reserve on a roomy filesystem; near full, stops what writes there, releases the reserve and keeps every file', async () => {
    const recordingId = await recordingBeingWritten(1 * MB);
    const hls = await prisma.hlsSession.create({
      data: {
        id: `hls_${randomBytes(8).toString('hex')}`,
        appId,
        streamId,
        mode: 'track_composite',
        preset: 'standard',
        segmentS: 2,
        audio: true,
        status: 'live',
        nodeId: 'node-a',
        dir: join(hlsDir, appId),
        publicId: randomBytes(16).toString('hex'),
      },
    });
    const reserve = join(recordingsDir, RESERVE_FILE);
    const marks = diskWatermarks(SIZE, stack.config.disk.watermarks);

    const roomy = await sut.run(new Date());

    // (The worker's first scheduled check, at boot, may have written the reserve already.)
    expect(roomy).toMatchObject({ levels: { recordings: 'ok', hls: 'ok' }, recordingsStopped: 0 });
    expect(statSync(reserve).size).toBe(marks.stopFreeBytes);
    expect((await prisma.recording.findUniqueOrThrow({ where: { id: recordingId } })).endReason).toBeNull();

    // Another process fills the disk: what is left would not hold the join of the 2 MB recorded.
    const fs = await new DiskStats().filesystem(recordingsDir);
    writeFileSync(join(mountPoint, 'filler'), Buffer.alloc((fs?.freeBytes ?? 0) - 1 * MB));

    const full = await sut.run(new Date());

    expect(full).toMatchObject({ levels: { recordings: 'stop', hls: 'stop' }, recordingsStopped: 1, hlsStopped: 1, reserveReleased: 1 });
    expect(existsSync(reserve)).toBe(false);
    const stopped = await prisma.recording.findUniqueOrThrow({ where: { id: recordingId }, include: { egresses: true } });
    expect(stopped.endReason).toBe('disk_full');
    // The stop is the recording's end: the joined file will be cut there.
    expect(stopped.endedAt).not.toBeNull();
    for (const part of stopped.egresses) expect(statSync(join(recordingsDir, '.incoming', part.location)).size).toBe(1 * MB);
    expect(await prisma.hlsSession.findUniqueOrThrow({ where: { id: hls.id } })).toMatchObject({
      status: 'stopped',
      error: expect.stringContaining('disk_full') as unknown,
    });

    // Checked again while still full: nothing is stopped twice, and no reserve is written back.
    expect(await sut.run(new Date())).toMatchObject({ recordingsStopped: 0, hlsStopped: 0, reserveWritten: 0, reserveReleased: 0 });

    // Once room is made, the reserve comes back.
    rmSync(join(mountPoint, 'filler'));
    expect(await sut.run(new Date())).toMatchObject({ levels: { recordings: 'ok' } });
    expect(statSync(reserve).size).toBe(marks.stopFreeBytes);
  });
});

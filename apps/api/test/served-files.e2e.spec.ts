import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { newId } from '@tally/contracts';
import { createPrismaClient } from '@tally/db';
import { ladderDirOf } from '@tally/recordings';
import { type ApiClient, TestRows } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';

const SECRET = 'admin-key-0123456789abcdef0123456789abcdef';

/**
 * The media user (and every joined node) can write the recordings and HLS directories: whatever it
 * leaves there must not turn the API into a reader of the API's own secrets.
 */
describe('files the API serves from media-writable directories', () => {
  let harness: ApiHarness;
  let prisma: ReturnType<typeof createPrismaClient>;
  let rows: TestRows;
  let secret: string;

  beforeAll(async () => {
    harness = await startApiHarness();
    prisma = createPrismaClient(harness.stack.config.databaseUrl);
    rows = new TestRows(prisma);
    secret = join(mkdtempSync(join(tmpdir(), 'tally-secrets-')), 'admin.key');
    writeFileSync(secret, SECRET);
  }, 120_000);

  afterAll(async () => {
    await prisma?.$disconnect();
    await harness?.stop();
    rmSync(dirname(secret), { recursive: true, force: true });
  });

  /** Replaces `path` by a symlink to the secret, then by a FIFO; each must answer 404 without the secret. */
  async function expectOnlyRegularFiles(client: ApiClient, url: string, path: string): Promise<void> {
    unlinkSync(path);
    symlinkSync(secret, path);
    const linked = await client.raw(url);
    expect([url, linked.status]).toEqual([url, 404]);
    expect(await linked.text()).not.toContain(SECRET);

    unlinkSync(path);
    execFileSync('mkfifo', [path]);
    // A FIFO nobody writes to: an open that waited for a writer would never answer.
    expect((await client.raw(url)).status).toBe(404);
  }

  /** A complete local recording of `appId`, its file written under the recordings directory. */
  async function completeRecording(appId: string, streamId: string): Promise<{ id: string; location: string; path: string }> {
    const { id, location } = await rows.newRecording({ appId, streamId, nodeId: harness.stack.nodeId });
    const path = join(harness.stack.config.recordings.dir, location);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, 'not really an mp4');
    return { id, location, path };
  }

  it('a complete recording whose file became a symlink or a FIFO answers 404, not what it points to', async () => {
    const { app, client } = await createTenant(harness.admin, 'links');
    const stream = await createStream(client, app.id);
    const recording = await completeRecording(app.id, stream.id);
    const url = `/v1/apps/${app.id}/recordings/${recording.id}/file`;
    const served = await client.raw(url);
    expect([served.status, await served.text()]).toEqual([200, 'not really an mp4']);

    await expectOnlyRegularFiles(client, url, recording.path);
  });

  it('a ready ladder answers 404 for a symlinked file, a FIFO, and a file under a symlinked directory', async () => {
    const { app, client } = await createTenant(harness.admin, 'ladder-links');
    const stream = await createStream(client, app.id);
    const recording = await completeRecording(app.id, stream.id);
    await prisma.recording.update({ where: { id: recording.id }, data: { ladderStatus: 'ready', ladderRenditions: [] } });
    const ladderDir = join(harness.stack.config.recordings.dir, ladderDirOf(recording.location));
    mkdirSync(ladderDir, { recursive: true });
    writeFileSync(join(ladderDir, 'master.m3u8'), '#EXTM3U\n');
    const url = `/v1/apps/${app.id}/recordings/${recording.id}/ladder/master.m3u8`;
    expect((await client.raw(url)).status).toBe(200);

    await expectOnlyRegularFiles(client, url, join(ladderDir, 'master.m3u8'));

    // The ladder directory itself swapped for a link to a directory holding a file of that name.
    unlinkSync(join(ladderDir, 'master.m3u8'));
    const elsewhere = join(dirname(secret), 'ladder');
    mkdirSync(elsewhere);
    symlinkSync(secret, join(elsewhere, 'master.m3u8'));
    writeFileSync(join(elsewhere, 'a_0.ts'), SECRET);
    renameSync(ladderDir, `${ladderDir}.old`);
    symlinkSync(elsewhere, ladderDir);
    for (const file of ['master.m3u8', 'a_0.ts']) {
      const answer = await client.raw(`/v1/apps/${app.id}/recordings/${recording.id}/ladder/${file}`);
      expect([file, answer.status]).toEqual([file, 404]);
      expect(await answer.text()).not.toContain(SECRET);
    }
  });

  it('a live HLS segment that became a symlink or a FIFO answers 404 to anyone', async () => {
    const { app, client } = await createTenant(harness.admin, 'hls-links');
    const stream = await createStream(client, app.id);
    const id = newId('hls');
    const dir = join(harness.stack.config.hls.dir, app.id, stream.id, id);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'seg_00001.ts'), 'segment');
    const session = await rows.newHlsSession({ id, appId: app.id, streamId: stream.id, nodeId: harness.stack.nodeId, dir });
    const url = `/hls/${session.publicId}/seg_00001.ts`;
    expect((await harness.anonymous.raw(url)).status).toBe(200);

    await expectOnlyRegularFiles(harness.anonymous, url, join(dir, 'seg_00001.ts'));
  });
});

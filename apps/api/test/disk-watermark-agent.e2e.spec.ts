import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { diskWatermarks } from '@tally/capacity';
import type { AppUsageView, NodeList, RecordingView, StreamToken, WorkerList } from '@tally/contracts';
import { type Child, startAppProcess, TEST_NODE_BUDGET, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';
import { download, recordingIn } from './recording-client.js';
import { mountSmallDisk, type SmallDisk } from './small-disk.js';

const run = promisify(execFile);
const MB = 1024 * 1024;

/**
 * The node agent runs egress (native runtime) and dies the moment the worker has decided a disk
 * stop; systemd starts it again. Egress outlives the agent, the new agent adopts it, and the
 * recording still ends complete with what it recorded, its capacity given back.
 */
describe('a recording stopped at the disk watermark while the agent running its egress restarts', () => {
  let disk: SmallDisk;
  let harness: ApiHarness;
  let worker: Child;
  let agent: Child | undefined;
  const publishers: Publisher[] = [];
  const log = (name: string) => join(tmpdir(), `tally-${name}-disk-agent-${Date.now()}.log`);

  beforeAll(async () => {
    disk = mountSmallDisk(64 * MB);
    // The test agent beats every second, so its heartbeat expires (3 s) before a new agent from
    // source has booted; the sweep would then fail the node's recordings as gone (NodeDepartures,
    // tested on its own). A production agent (5 s beats) restarts within its 15 s.
    harness = await startApiHarness(
      {
        TALLY_RECORDINGS_DIR: disk.dir,
        TALLY_DISK_STOP_FREE_MIN_MB: '4',
        TALLY_DISK_HORIZON_S: '10',
        TALLY_SWEEP_INTERVAL_S: '3600',
      },
      { workers: 'native' },
    );
    worker = await startAppProcess('worker', harness.stack.env, log('worker'));
  }, 180_000);

  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await worker?.stop();
    // The agent stops the workers it runs (the stack stops the first one, already dead).
    await agent?.stop();
    await harness?.stop();
    disk?.unmount();
  });

  const egressWorker = async () =>
    (await harness.admin.get<WorkerList>(`/v1/nodes/${harness.stack.nodeId}/workers`)).body.items.find((w) => w.kind === 'egress');

  it('ends complete with the disk as its reason and a file that plays, on the same egress, and gives back its reservations', async () => {
    const { app, client } = await createTenant(harness.admin, 'disk-agent');
    const stream = await createStream(client, app.id);
    const token = (await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'cam', role: 'publisher' }))
      .body;
    publishers.push(await joinAndPublish(token.url, token.token, { video: true }));
    await tracksUp(client, app.id, stream.id);
    const started = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, { mode: 'passthrough' });
    expect(started.status).toBe(201);
    const active = await recordingIn(client, app.id, started.body.id, ['active']);
    const recorder = await waitFor('the agent to report its egress', egressWorker);
    await new Promise((r) => setTimeout(r, 6_000));

    const marks = diskWatermarks(disk.totalBytes(), harness.stack.config.disk.watermarks);
    const fullAt = Date.now();
    await disk.fillLeaving(marks.stopFreeBytes - 1 * MB);
    const recordedS = (fullAt - Date.parse(active.startedAt ?? '')) / 1000;
    await waitFor(
      'the disk stop to be noted',
      async () => ((await client.get<RecordingView>(`/v1/apps/${app.id}/recordings/${active.id}`)).body.endReason ? true : undefined),
      30_000,
    );
    await harness.stack.agent.stop('SIGKILL');
    const killedAt = Date.now();
    agent = await startAppProcess(
      'agent',
      { ...harness.stack.env, ...TEST_NODE_BUDGET, TALLY_NODE_ID: harness.stack.nodeId, TALLY_HEARTBEAT_INTERVAL_S: '1' },
      log('agent'),
    );

    // The new agent took over the egress that was finalising, rather than starting another.
    const adopted = await waitFor(
      'the new agent to report its egress',
      async () => {
        const list = (await harness.admin.get<WorkerList>(`/v1/nodes/${harness.stack.nodeId}/workers`)).body;
        return Date.parse(list.reportedAt) > killedAt ? (list.items.find((w) => w.kind === 'egress') ?? null) : undefined;
      },
      60_000,
    );
    expect(adopted).toMatchObject({ id: recorder.id, restarts: 0 });

    const complete = await recordingIn(client, app.id, active.id, ['complete', 'failed'], 180_000);
    expect(complete).toMatchObject({ status: 'complete', endReason: 'disk_full', mode: 'passthrough', error: null });
    expect(complete.durationS ?? 0).toBeGreaterThan(recordedS - 2);
    const file = await download(client, app.id, complete);
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type', '-of', 'json', file]);
    const probed = JSON.parse(stdout) as { format: { duration: string }; streams: { codec_type: string }[] };
    expect(probed.streams.map((s) => s.codec_type).sort()).toEqual(['audio', 'video']);
    expect(Number(probed.format.duration)).toBeGreaterThan(recordedS - 2);
    await run('ffmpeg', ['-v', 'error', '-xerror', '-i', file, '-f', 'null', '-']);
    rmSync(file);

    // Nothing is held for it any more: the app's recording quota and the disk's reservation.
    const usage = (await client.get<AppUsageView>(`/v1/apps/${app.id}/usage`)).body;
    expect(usage.items.find((i) => i.quota === 'maxRecordings')?.used).toBe(0);
    const disks = (await harness.admin.get<NodeList>('/v1/nodes')).body.items.flatMap((n) => n.disks);
    expect(disks.find((d) => d.roles.includes('recordings'))?.reservedMb).toBe(0);
  }, 300_000);
});

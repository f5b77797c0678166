import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreatedIngress, IngressView, NodeList, StreamView, WorkerList } from '@tally/contracts';
import { type Child, freePort, pushRtmp, startAppProcess, stopPush, TEST_NODE_BUDGET, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';

/**
 * A cluster of two nodes on this host: the origin (the stack's agent) and a joined `worker` node (a
 * second agent with ingress ports of its own), both running ingress on demand (native runtime).
 */
describe('an ingress admitted on a joined worker node', () => {
  let harness: ApiHarness;
  let worker: Child | undefined;
  let joined: Child | undefined;
  let push: ChildProcess | undefined;
  const nodeId = `joined-${process.pid}`;
  let rtmpPort: number;

  beforeAll(async () => {
    harness = await startApiHarness({}, { workers: 'native' });
    worker = await startAppProcess('worker', harness.stack.env, join(tmpdir(), `tally-worker-joined-ingress-${Date.now()}.log`));
    rtmpPort = await freePort();
    joined = await startAppProcess(
      'agent',
      {
        ...harness.stack.env,
        ...TEST_NODE_BUDGET,
        TALLY_NODE_ID: nodeId,
        TALLY_NODE_ROLE: 'worker',
        TALLY_HEARTBEAT_INTERVAL_S: '1',
        TALLY_WORKERS_DIR: mkdtempSync(join(tmpdir(), 'tally-workers-joined-')),
        TALLY_EGRESS_TEMPLATE_PORT: String(await freePort()),
        TALLY_INGRESS_RTMP_PORT: String(rtmpPort),
        TALLY_INGRESS_WHIP_PORT: String(await freePort()),
        TALLY_INGRESS_RELAY_PORT: String(await freePort()),
        TALLY_INGRESS_UDP_PORT: String(await freePort()),
      },
      join(tmpdir(), `tally-agent-${nodeId}.log`),
    );
    await waitFor(
      'the joined node in the pool',
      async () => ((await harness.admin.get<NodeList>('/v1/nodes')).body.items.some((n) => n.nodeId === nodeId) ? true : undefined),
      30_000,
    );
  }, 180_000);

  afterAll(async () => {
    if (push) await stopPush(push);
    await joined?.stop();
    await worker?.stop();
    await harness?.stop();
  });

  it('is handed that node’s URL, and an encoder pushing to it makes the stream live', { timeout: 180_000 }, async () => {
    const { app, client } = await createTenant(harness.admin, 'joined ingest');
    const stream = await createStream(client, app.id, 'pushed to the joined node');
    // Then the origin takes no new work: the ingress can only be admitted on the joined node.
    expect((await harness.admin.patch(`/v1/nodes/${harness.stack.nodeId}`, { status: 'draining' })).status).toBe(200);

    const created = await client.post<CreatedIngress>(`/v1/apps/${app.id}/ingresses`, { streamId: stream.id, kind: 'rtmp' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const nodeIp = harness.stack.env['TALLY_NODE_IP'];
    expect(created.body.url).toBe(`rtmp://${nodeIp}:${rtmpPort}/x`);
    const workers = (await harness.admin.get<WorkerList>(`/v1/nodes/${nodeId}/workers`)).body;
    expect(workers.items.map((w) => w.kind)).toContain('ingress');

    push = pushRtmp(`${created.body.url}/${created.body.streamKey}`, 120);
    const base = `/v1/apps/${app.id}`;
    await waitFor(
      'the ingress to publish',
      async () => ((await client.get<IngressView>(`${base}/ingresses/${created.body.id}`)).body.status === 'publishing' ? true : undefined),
      60_000,
    );
    await waitFor(
      'the stream to be live',
      async () => ((await client.get<StreamView>(`${base}/streams/${stream.id}`)).body.status === 'live' ? true : undefined),
      30_000,
    );

    await stopPush(push);
    push = undefined;
    expect((await client.delete(`${base}/ingresses/${created.body.id}`)).status).toBe(204);
  });
});

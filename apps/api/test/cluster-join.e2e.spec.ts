import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import type { Server } from 'node:net';
import { join } from 'node:path';
import type { CapacityView, JoinTokenView, NodeList } from '@tally/contracts';
import { LivekitRoomClient } from '@tally/livekit';
import { freePort, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { addHost, forward, installOnNode, killService, readableCheckout, nodeHome, removeHome, type TwoHosts } from './joined-node.js';

/** Two hosts on one machine: the origin (the test stack) and a node that joins it with ./install.sh --join. */
describe('install.sh --join', () => {
  let hosts: TwoHosts;
  let sut: ApiHarness;
  let originUrl: string;
  let home: string;
  const forwarders: Server[] = [];
  let poolCpuBefore = 0;

  const nodes = async () => (await sut.admin.get<NodeList>('/v1/nodes')).body.items;
  const poolCpu = async () => (await sut.admin.get<CapacityView>('/v1/capacity')).body.total.allocatable.cpuMillicores;
  const newToken = async () => {
    const created = await sut.admin.post<JoinTokenView>('/v1/nodes/join-tokens', {});
    expect(created.status).toBe(201);
    return created.body;
  };
  const joinAs = async (name: string, token: string) =>
    installOnNode(
      hosts.ns,
      [
        '--join',
        originUrl,
        '--token',
        token,
        '--role',
        'media',
        '--name',
        name,
        '--insecure-http',
        '--home',
        home,
        '--no-provision',
      ].concat(['--no-systemd', '--no-sysctl', '--offline', '--node-ip', hosts.nodeIp]),
      { TALLY_HEARTBEAT_INTERVAL_S: '1' },
    );

  beforeAll(async () => {
    await readableCheckout();
    hosts = await addHost();
    const [redisPort, apiPort] = [await freePort(), await freePort()];
    originUrl = `http://${hosts.originIp}:${apiPort}`;
    sut = await startApiHarness({ TALLY_CLUSTER_REDIS_URL: `redis://${hosts.originIp}:${redisPort}`, TALLY_PUBLIC_URL: originUrl });
    // The origin's Redis and API as a node on the other host reaches them (install.sh --cluster-bind on a real origin).
    forwarders.push(await forward(hosts.originIp, redisPort, sut.stack.redis.port));
    forwarders.push(await forward(hosts.originIp, apiPort, sut.stack.config.http.port));
    home = nodeHome();
    poolCpuBefore = await poolCpu();
  });

  afterAll(async () => {
    if (home && existsSync(join(home, 'run', 'mode'))) await installOnNode(hosts.ns, ['--stop', '--home', home]);
    for (const server of forwarders) server.close();
    await sut?.stop();
    await hosts?.remove();
    if (home) removeHome(home);
  });

  it('--dry-run prints every step and changes nothing; plain HTTP needs --insecure-http', async () => {
    const dryHome = `${home}-dry`;
    const dry = await installOnNode(hosts.ns, [
      '--join',
      originUrl,
      '--token',
      'tjt_x',
      '--name',
      'dry-1',
      '--insecure-http',
      '--home',
      dryHome,
      '--dry-run',
    ]);
    expect(dry.code, dry.output).toBe(0);
    for (const step of [
      'would run: bash',
      `would POST ${originUrl}/v1/nodes/join`,
      'would write',
      'would start livekit',
      'would start agent',
    ])
      expect(dry.output).toContain(step);
    expect(existsSync(dryHome)).toBe(false);
    const plain = await installOnNode(hosts.ns, ['--join', originUrl, '--token', 'tjt_x', '--home', dryHome, '--dry-run']);
    expect(plain.code).not.toBe(0);
    expect(plain.output).toContain('without --insecure-http');
  });

  it('joins with a one-time token: the node is in the pool with its measured budget and the pool grows', async () => {
    const { token, command } = await newToken();
    expect(command).toContain(`--join ${originUrl} --token ${token}`);
    const name = `media-${randomBytes(3).toString('hex')}`;

    const joined = await joinAs(name, token);

    expect(joined.code, joined.output).toBe(0);
    expect(statSync(join(home, 'tally.env')).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'livekit.yaml')).mode & 0o777).toBe(0o600);
    const reused = await sut.anonymous.post('/v1/nodes/join', { token, name: 'another', role: 'media' });
    expect(reused.status).toBe(401);
    const node = (await nodes()).find((n) => n.nodeId === name);
    expect(node).toMatchObject({ role: 'media', status: 'active' });
    expect(node?.budget.cpuMillicores).toBeGreaterThan(0);
    expect(node?.budget.ramMb).toBeGreaterThan(0);
    expect(await poolCpu()).toBeGreaterThan(poolCpuBefore);
  });

  it("runs the node's livekit-server in the origin's LiveKit pool: a room made there is the origin's too", async () => {
    const { apiKey, apiSecret } = sut.stack.livekit;
    const onNode = new LivekitRoomClient({ url: `http://${hosts.nodeIp}:7880`, apiKey, apiSecret });
    const atOrigin = new LivekitRoomClient({ url: sut.stack.livekit.url, apiKey, apiSecret });
    const room = `joined-${randomBytes(3).toString('hex')}`;

    await onNode.createRoom(room, { emptyTimeoutS: 60, departureTimeoutS: 10 });

    expect((await atOrigin.listRooms()).map((r) => r.name)).toContain(room);
    await atOrigin.deleteRoom(room);
  });

  // Transcodes on joined nodes: a transcode job placed on the joined gpu/worker node runs there and its ladder plays.
  it.todo('runs a transcode job on the joined node and its ladder plays');

  it('--leave drains the node: it takes no new work, waits for its running work, then leaves the pool', async () => {
    const name = (await nodes()).find((n) => n.role === 'media')?.nodeId ?? '';
    const { app, client } = await createTenant(sut.admin, `leave-${randomBytes(3).toString('hex')}`);
    await sut.admin.patch(`/v1/nodes/${sut.stack.nodeId}`, { status: 'disabled' });
    const stream = await createStream(client, app.id);
    await sut.admin.patch(`/v1/nodes/${sut.stack.nodeId}`, { status: 'active' });
    expect((await nodes()).find((n) => n.nodeId === name)?.reserved.cpuMillicores).toBeGreaterThan(0);

    const leaving = installOnNode(hosts.ns, ['--leave', '--home', home], { TALLY_LEAVE_TIMEOUT_S: '90' });
    await waitFor('draining', async () => ((await nodes()).find((n) => n.nodeId === name)?.status === 'draining' ? true : undefined));
    const check = await client.post<{ admitted: boolean; nodeId?: string }>(`/v1/apps/${app.id}/capacity/check`, {
      kind: 'stream',
      count: 1,
    });
    expect(check.body).toMatchObject({ admitted: true, nodeId: sut.stack.nodeId });
    expect((await nodes()).some((n) => n.nodeId === name)).toBe(true);
    expect((await client.delete(`/v1/apps/${app.id}/streams/${stream.id}`)).status).toBeLessThan(300);

    const left = await leaving;

    expect(left.code, left.output).toBe(0);
    expect(left.output).toContain('waiting for 1 to finish');
    expect((await nodes()).map((n) => n.nodeId)).not.toContain(name);
    expect(existsSync(join(home, 'tally.env'))).toBe(false);
    expect(await poolCpu()).toBe(poolCpuBefore);
  });

  it('a killed node leaves the pool once its heartbeat expires', async () => {
    const name = `media-${randomBytes(3).toString('hex')}`;
    const joined = await joinAs(name, (await newToken()).token);
    expect(joined.code, joined.output).toBe(0);
    expect((await nodes()).map((n) => n.nodeId)).toContain(name);

    killService(home, 'agent');
    killService(home, 'livekit');

    await waitFor('node gone', async () => ((await nodes()).some((n) => n.nodeId === name) ? undefined : true), 15_000);
    expect(await poolCpu()).toBe(poolCpuBefore);
  });
});

import { execFile } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CapacityLedger } from '@tally/admission';
import { type CapacityView, type JoinTokenView, newId, type NodeList, type RecordingView } from '@tally/contracts';
import { createPrismaClient, type PrismaClient } from '@tally/db';
import { LivekitRoomClient } from '@tally/livekit';
import { ladderReservationId } from '@tally/recordings';
import { type ApiClient, type Child, freePort, startAppProcess, TEST_NODE_BUDGET, waitFor } from '@tally/testing';
import { Redis } from 'ioredis';
import { AccessToken, RoomServiceClient } from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from './api-harness.js';
import { expectLadderPlays, type Ladder, probeVideo } from './ladder-playback.js';
import { iceServersFromJoin } from '@tally/testing/livekit-join';
import { addHost, forward, installOnNode, killService, readableCheckout, nodeHome, removeHome, type TwoHosts } from './joined-node.js';

const run = promisify(execFile);
/** The origin's TURN over TLS server (coturn with `install.sh --domain`), as its API hands it to joining media nodes. */
const ORIGIN_TURN = { host: 'turn.tally.test', port: 5349, secret: randomBytes(24).toString('hex') };

/** Two hosts on one machine: the origin (the test stack) and a node that joins it with ./install.sh --join. */
describe('install.sh --join', () => {
  let hosts: TwoHosts;
  let sut: ApiHarness;
  let originUrl: string;
  let home: string;
  const forwarders: Server[] = [];
  let poolCpuBefore = 0;
  let redis: Redis;
  let prisma: PrismaClient;
  let worker: Child | undefined;
  let workerHome = '';
  const workerName = `worker-${randomBytes(3).toString('hex')}`;

  const nodes = async () => (await sut.admin.get<NodeList>('/v1/nodes')).body.items;
  const poolCpu = async () => (await sut.admin.get<CapacityView>('/v1/capacity')).body.total.allocatable.cpuMillicores;
  const newToken = async (name: string, role: 'media' | 'worker' = 'media') => {
    const created = await sut.admin.post<JoinTokenView>('/v1/nodes/join-tokens', { name, role });
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

  const recordingsDir = () => sut.stack.env['TALLY_RECORDINGS_DIR'] ?? '';
  /** The user the agent and its media workers run as (ADR 0017). */
  const mediaUid = async () => Number((await run('id', ['-u', 'tally-media'])).stdout.trim());
  const ownerAndMode = async (path: string) => (await run('stat', ['-c', '%U:%G %a', path])).stdout.trim();

  /**
   * A complete recording: `seconds` of test pattern and tone at `size`, written by ffmpeg where egress
   * writes (the origin's recordings directory, owned by the service user) and registered as egress's finaliser would.
   */
  async function recordingFile(client: ApiClient, appId: string, size: string, seconds: number): Promise<RecordingView> {
    const stream = await createStream(client, appId);
    const id = newId('rec');
    const location = `${appId}/${id}.mp4`;
    mkdirSync(join(recordingsDir(), appId), { recursive: true });
    const lavfi = (source: string) => ['-f', 'lavfi', '-i', `${source}:duration=${seconds}`];
    await run('ffmpeg', [
      ...['-hide_banner', '-loglevel', 'error'],
      ...lavfi(`testsrc=size=${size}:rate=15`),
      ...lavfi('sine=frequency=440'),
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', '-shortest', join(recordingsDir(), location)],
    ]);
    await run('chown', ['-R', 'tally-media:tally-media', join(recordingsDir(), appId)]);
    const probed = await probeVideo(join(recordingsDir(), location));
    const now = new Date();
    await prisma.recording.create({
      data: {
        id,
        appId,
        streamId: stream.id,
        mode: 'track_composite',
        reason: 'written by ffmpeg for the test',
        nodeId: sut.stack.nodeId,
        status: 'complete',
        storage: 'local',
        location,
        durationS: probed.durationS,
        codecs: [
          { type: 'video', codec: 'h264' },
          { type: 'audio', codec: 'aac' },
        ],
        startedAt: now,
        endedAt: now,
      },
    });
    return (await client.get<RecordingView>(`/v1/apps/${appId}/recordings/${id}`)).body;
  }

  /** Asks for a ladder while the origin takes no new work (an operator's PATCH), so admission can only place it on the worker node. */
  async function ladderOffOrigin(client: ApiClient, recording: RecordingView): Promise<RecordingView> {
    expect((await sut.admin.patch(`/v1/nodes/${sut.stack.nodeId}`, { status: 'disabled' })).status).toBe(200);
    try {
      const requested = await client.post<RecordingView>(`/v1/apps/${recording.appId}/recordings/${recording.id}/ladder`);
      expect(requested.status, JSON.stringify(requested.body)).toBe(202);
      return requested.body;
    } finally {
      await sut.admin.patch(`/v1/nodes/${sut.stack.nodeId}`, { status: 'active' });
    }
  }

  const ladderOnceIn = (client: ApiClient, recording: RecordingView, statuses: readonly Ladder['status'][]) =>
    waitFor(
      `ladder of ${recording.id} in ${statuses.join('/')}`,
      async () => {
        const r = (await client.get<RecordingView>(`/v1/apps/${recording.appId}/recordings/${recording.id}`)).body;
        return r.ladder && statuses.includes(r.ladder.status) ? r : undefined;
      },
      240_000,
    );

  beforeAll(async () => {
    await readableCheckout();
    hosts = await addHost();
    const [redisPort, apiPort] = [await freePort(), await freePort()];
    originUrl = `http://${hosts.originIp}:${apiPort}`;
    sut = await startApiHarness({
      TALLY_CLUSTER_REDIS_URL: `redis://${hosts.originIp}:${redisPort}`,
      TALLY_PUBLIC_URL: originUrl,
      TALLY_CLUSTER_TURN_HOST: ORIGIN_TURN.host,
      TALLY_CLUSTER_TURN_PORT: String(ORIGIN_TURN.port),
      TALLY_CLUSTER_TURN_SECRET: ORIGIN_TURN.secret,
    });
    // The origin's Redis and API as a node on the other host reaches them (install.sh --cluster-bind on a real origin).
    forwarders.push(await forward(hosts.originIp, redisPort, sut.stack.redis.port));
    forwarders.push(await forward(hosts.originIp, apiPort, sut.stack.config.http.port));
    home = nodeHome();
    redis = new Redis(sut.stack.redis.url);
    prisma = createPrismaClient(sut.stack.config.databaseUrl);
    poolCpuBefore = await poolCpu();
  });

  afterAll(async () => {
    for (const dir of [home, workerHome])
      if (dir && existsSync(join(dir, 'run', 'mode'))) await installOnNode(hosts.ns, ['--stop', '--home', dir]);
    await worker?.stop();
    await prisma?.$disconnect();
    redis?.disconnect();
    for (const server of forwarders) server.close();
    await sut?.stop();
    await hosts?.remove();
    for (const dir of [home, workerHome]) if (dir) removeHome(dir);
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

  it('--dry-run prints the steps of each role: what it provisions, which services it starts, where its recordings go', async () => {
    const dryHome = `${home}-dry`;
    const expected = {
      media: { provisions: ['system.sh', 'livekit.sh'], not: ['egress.sh', 'ingress.sh'], livekit: true },
      worker: { provisions: ['system.sh', 'egress.sh', 'ingress.sh'], not: ['livekit.sh'], livekit: false },
      gpu: { provisions: ['system.sh', 'egress.sh'], not: ['livekit.sh', 'ingress.sh'], livekit: false },
    } as const;
    for (const [role, want] of Object.entries(expected)) {
      const common = [
        '--join',
        originUrl,
        '--token',
        'tjt_x',
        '--role',
        role,
        '--name',
        `dry-${role}`,
        '--insecure-http',
        '--home',
        dryHome,
      ];
      const dry = await installOnNode(hosts.ns, [...common, '--recordings-dir', '/mnt/tally-recordings', '--dry-run']);

      expect(dry.code, dry.output).toBe(0);
      for (const script of want.provisions)
        expect(dry.output, role).toContain(`would run: bash ${await readableCheckout()}/scripts/provision/${script}`);
      for (const script of want.not) expect(dry.output, role).not.toContain(`scripts/provision/${script}`);
      expect(dry.output).toContain(`{name: dry-${role}, role: ${role}, token}`);
      expect(dry.output).toContain('would start agent');
      expect(dry.output.includes('would start livekit'), role).toBe(want.livekit);
      expect(dry.output).toContain('recordings directory: /mnt/tally-recordings');
      expect(existsSync(dryHome)).toBe(false);
      // Without a shared recordings directory the node's ladders would land where the origin never looks.
      const unshared = await installOnNode(hosts.ns, [...common, '--dry-run']);
      expect(unshared.output).toContain(`no --recordings-dir: ladders and recordings placed on this node go to ${dryHome}/recordings`);
    }
  });

  it('joins with a one-time token: the node is in the pool with its measured budget and the pool grows', async () => {
    const name = `media-${randomBytes(3).toString('hex')}`;
    const { token, command } = await newToken(name);
    expect(command).toContain(`--join ${originUrl} --token ${token}`);

    const joined = await joinAs(name, token);

    expect(joined.code, joined.output).toBe(0);
    // Secrets readable by root and the one service user that needs each (ADR 0017).
    expect(await ownerAndMode(join(home, 'tally.env'))).toBe('root:tally-media 640');
    expect(await ownerAndMode(join(home, 'livekit.yaml'))).toBe('root:tally-livekit 640');
    // The origin's TURN over TLS server, for the participants LiveKit places on this node.
    expect(joined.output).toContain(`TURN/TLS: participants on this node get turns:${ORIGIN_TURN.host}:${ORIGIN_TURN.port}`);
    expect(joined.output).toContain(`add ${hosts.nodeIp} to TALLY_TURN_ALLOWED_PEERS`);
    expect(readFileSync(join(home, 'livekit.yaml'), 'utf8')).toContain(
      `  turn_servers:\n    - host: ${ORIGIN_TURN.host}\n      port: ${ORIGIN_TURN.port}\n      protocol: tls\n      secret: ${ORIGIN_TURN.secret}\n`,
    );
    const reused = await sut.anonymous.post('/v1/nodes/join', { token, name: 'another', role: 'media' });
    expect(reused.status).toBe(401);
    const node = (await nodes()).find((n) => n.nodeId === name);
    expect(node).toMatchObject({ role: 'media', status: 'active' });
    expect(node?.budget.cpuMillicores).toBeGreaterThan(0);
    expect(node?.budget.ramMb).toBeGreaterThan(0);
    expect(await poolCpu()).toBeGreaterThan(poolCpuBefore);
  });

  it("runs the node's livekit-server in the origin's LiveKit pool: rooms are shared, and LiveKit can place one on the node", async () => {
    const { apiKey, apiSecret } = sut.stack.livekit;
    const onNode = new LivekitRoomClient({ url: `http://${hosts.nodeIp}:7880`, apiKey, apiSecret });
    const atOrigin = new LivekitRoomClient({ url: sut.stack.livekit.url, apiKey, apiSecret });
    const room = `joined-${randomBytes(3).toString('hex')}`;

    await onNode.createRoom(room, { emptyTimeoutS: 60, departureTimeoutS: 10 });

    expect((await atOrigin.listRooms()).map((r) => r.name)).toContain(room);
    await atOrigin.deleteRoom(room);

    // LiveKit's own registry (its Redis hash "nodes") holds the node's livekit-server, announced on the node's address.
    const lkNodes = await redis.hgetallBuffer('nodes');
    const lkNodeId = Object.entries(lkNodes).find(([, info]) => info.includes(hosts.nodeIp))?.[0];
    expect(lkNodeId, "the joined livekit-server in LiveKit's node registry").toBeDefined();
    const placed = `placed-${randomBytes(3).toString('hex')}`;
    await new RoomServiceClient(sut.stack.livekit.url, apiKey, apiSecret).createRoom({
      name: placed,
      nodeId: lkNodeId ?? '',
      emptyTimeout: 60,
    });
    // Asked at the origin, hosted on the node: LiveKit maps the room to the joined livekit-server.
    expect(await redis.hget('room_node_map', placed)).toBe(lkNodeId);
    expect((await onNode.listRooms([placed])).map((r) => r.name)).toEqual([placed]);

    // A participant of that room, connecting at the origin as clients do, is answered by the node's
    // livekit-server: the TURN over TLS server it names is the origin's coturn (the test origin's own
    // livekit-server names none), with credentials coturn's shared secret verifies.
    const token = new AccessToken(apiKey, apiSecret, { identity: 'behind-a-firewall', ttl: 300 });
    token.addGrant({ roomJoin: true, room: placed, canPublish: true, canSubscribe: true });
    const iceServers = await iceServersFromJoin(sut.stack.livekit.url, await token.toJwt());
    await atOrigin.deleteRoom(placed);
    const turns = iceServers.filter((s) => s.urls.some((u) => u.startsWith('turns:')));
    expect(turns.map((s) => s.urls)).toEqual([[`turns:${ORIGIN_TURN.host}:${ORIGIN_TURN.port}?transport=tcp`]]);
    const [expiry] = (turns[0]?.username ?? '').split(':');
    expect(Number(expiry)).toBeGreaterThan(Date.now() / 1000);
    expect(turns[0]?.credential).toBe(
      createHmac('sha1', ORIGIN_TURN.secret)
        .update(turns[0]?.username ?? '')
        .digest('base64'),
    );
  });

  it('--leave drains the node: it takes no new work, waits for its running work, then leaves the pool', async () => {
    const name = (await nodes()).find((n) => n.role === 'media')?.nodeId ?? '';
    const { app, client } = await createTenant(sut.admin, `leave-${randomBytes(3).toString('hex')}`);
    await sut.admin.patch(`/v1/nodes/${sut.stack.nodeId}`, { status: 'disabled' });
    const stream = await createStream(client, app.id);
    await sut.admin.patch(`/v1/nodes/${sut.stack.nodeId}`, { status: 'active' });
    expect((await nodes()).find((n) => n.nodeId === name)?.reserved.cpuMillicores).toBeGreaterThan(0);

    const nodeRedisUrl = /^REDIS_URL=(.*)$/m.exec(readFileSync(join(home, 'tally.env'), 'utf8'))?.[1] ?? '';
    expect(new URL(nodeRedisUrl).username).toBe(`tally-node-${name}`);
    const leaving = installOnNode(hosts.ns, ['--leave', '--home', home], { TALLY_LEAVE_TIMEOUT_S: '90' });
    await waitFor('draining', async () => ((await nodes()).find((n) => n.nodeId === name)?.status === 'draining' ? true : undefined));
    const check = await client.post<{ admitted: boolean }>(`/v1/apps/${app.id}/capacity/check`, { kind: 'stream', count: 1 });
    expect(check.body).toEqual({ admitted: true });
    expect((await nodes()).some((n) => n.nodeId === name)).toBe(true);
    expect((await client.delete(`/v1/apps/${app.id}/streams/${stream.id}`)).status).toBeLessThan(300);

    const left = await leaving;

    expect(left.code, left.output).toBe(0);
    expect(left.output).toContain('waiting for 1 to finish');
    expect((await nodes()).map((n) => n.nodeId)).not.toContain(name);
    expect(existsSync(join(home, 'tally.env'))).toBe(false);
    expect(await poolCpu()).toBe(poolCpuBefore);
    // The node's own Redis user is gone with it.
    const former = new Redis(nodeRedisUrl, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    const errors: string[] = [];
    former.on('error', (error: Error) => errors.push(error.message));
    await expect(former.connect().then(() => former.ping())).rejects.toThrow();
    former.disconnect();
    expect(errors.join('\n')).toMatch(/WRONGPASS/);
  });

  it('a killed node leaves the pool once its heartbeat expires', async () => {
    const name = `media-${randomBytes(3).toString('hex')}`;
    const joined = await joinAs(name, (await newToken(name)).token);
    expect(joined.code, joined.output).toBe(0);
    expect((await nodes()).map((n) => n.nodeId)).toContain(name);

    killService(home, 'agent');
    killService(home, 'livekit');

    await waitFor('node gone', async () => ((await nodes()).some((n) => n.nodeId === name) ? undefined : true), 15_000);
    expect(await poolCpu()).toBe(poolCpuBefore);
  });
  it('runs a transcode job on a joined worker node that shares the recordings directory, and its ladder plays', async () => {
    // The origin's recordings directory, shared with the node as a mount would be: the media user (made by the first join) owns it.
    await run('chown', ['-R', 'tally-media:tally-media', recordingsDir()]);
    worker = await startAppProcess(
      'worker',
      { ...sut.stack.env, TALLY_SWEEP_INTERVAL_S: '2' },
      join(tmpdir(), `tally-worker-${workerName}.log`),
    );
    workerHome = nodeHome();
    const joined = await installOnNode(
      hosts.ns,
      [
        ...[
          '--join',
          originUrl,
          '--token',
          (await newToken(workerName, 'worker')).token,
          '--role',
          'worker',
          '--name',
          workerName,
          '--insecure-http',
        ],
        ...['--home', workerHome, '--no-provision', '--no-systemd', '--no-sysctl', '--offline', '--node-ip', hosts.nodeIp],
        ...['--recordings-dir', recordingsDir()],
      ],
      { TALLY_HEARTBEAT_INTERVAL_S: '1', ...TEST_NODE_BUDGET },
    );
    expect(joined.code, joined.output).toBe(0);
    const env = readFileSync(join(workerHome, 'tally.env'), 'utf8');
    expect(env).toContain(`TALLY_RECORDINGS_DIR=${recordingsDir()}\n`);
    expect(env).toContain('TALLY_WORKER_RUNTIME=native\n');
    expect(existsSync(join(workerHome, 'livekit.yaml'))).toBe(false);
    expect((await nodes()).find((n) => n.nodeId === workerName)).toMatchObject({
      role: 'worker',
      status: 'active',
      budget: { cpuMillicores: Number(TEST_NODE_BUDGET.TALLY_NODE_CPU_MILLICORES) },
    });
    const { app, client } = await createTenant(sut.admin, `ladder-${randomBytes(3).toString('hex')}`);
    const recording = await recordingFile(client, app.id, '854x480', 3);

    const requested = await ladderOffOrigin(client, recording);

    expect(requested.ladder).toMatchObject({ encoder: 'x264', nodeId: workerName });
    const done = await ladderOnceIn(client, recording, ['ready', 'failed']);
    const ladder = done.ladder as Ladder;
    expect(ladder).toMatchObject({ status: 'ready', nodeId: workerName, error: null });
    expect(ladder.renditions.map((r) => `${r.name} ${r.width}x${r.height}`)).toEqual(['480p 854x480', '360p 640x360']);
    await expectLadderPlays(client, done, ladder);
    // Written on the node by its agent, as the media user (the origin's own agent runs as root here).
    expect(statSync(join(recordingsDir(), app.id, `${recording.id}.ladder`, 'master.m3u8')).uid).toBe(await mediaUid());
    expect(await new CapacityLedger(redis).held(ladderReservationId(recording.id))).toBeUndefined();
  }, 300_000);

  it('a killed worker node leaves the pool after its heartbeat TTL and the ladder it was encoding is reported failed', async () => {
    const { app, client } = await createTenant(sut.admin, `killed-${randomBytes(3).toString('hex')}`);
    // Long enough that the node is still encoding when it dies.
    const recording = await recordingFile(client, app.id, '1280x720', 60);
    expect((await ladderOffOrigin(client, recording)).ladder?.nodeId).toBe(workerName);
    const running = await ladderOnceIn(client, recording, ['running', 'ready', 'failed']);
    expect(running.ladder?.status).toBe('running');

    killService(workerHome, 'agent');

    await waitFor('worker node gone', async () => ((await nodes()).some((n) => n.nodeId === workerName) ? undefined : true), 15_000);
    const failed = await ladderOnceIn(client, recording, ['failed', 'ready']);
    expect(failed.ladder).toMatchObject({ status: 'failed', nodeId: workerName, error: `node ${workerName} left the pool` });
    expect(await new CapacityLedger(redis).held(ladderReservationId(recording.id))).toBeUndefined();
    expect(existsSync(join(recordingsDir(), app.id, `${recording.id}.ladder`))).toBe(false);
    expect(await poolCpu()).toBe(poolCpuBefore);
  }, 300_000);
});

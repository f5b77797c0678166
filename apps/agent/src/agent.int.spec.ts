import { mkdtempSync, readFileSync, rmSync, statfsSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { NODE_KEYS, NodeRegistry } from '@tally/nodes';
import { startChild, startRedis, waitFor, type TestRedis } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent } from './agent.js';
import { loadAgentConfig } from './config.js';
import { StatfsProbe } from './probe/filesystems.js';
import { LinuxHostProbe } from './probe/host-probe.js';

const MIB = 1024 * 1024;

/** This machine as a user would check it, independently of the probe: cores, RAM, and the container's own limits. */
function expectedBudget(): { cpuMillicores: number; ramMb: number } {
  const read = (path: string) => {
    try {
      return readFileSync(path, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  const quotas: number[] = [];
  const [max, period] = (read('/sys/fs/cgroup/cpu.max') ?? '').split(' ').map(Number);
  if (max! > 0 && period! > 0) quotas.push(Math.floor((max! / period!) * 1_000));
  const cfsQuota = Number(read('/sys/fs/cgroup/cpu/cpu.cfs_quota_us'));
  const cfsPeriod = Number(read('/sys/fs/cgroup/cpu/cpu.cfs_period_us'));
  if (cfsQuota > 0 && cfsPeriod > 0) quotas.push(Math.floor((cfsQuota / cfsPeriod) * 1_000));
  const constrained = process.constrainedMemory() || Number.POSITIVE_INFINITY;
  return {
    cpuMillicores: Math.min(Math.min(cpus().length, availableParallelism()) * 1_000, ...quotas),
    ramMb: Math.floor(Math.min(totalmem(), constrained) / MIB),
  };
}

describe(startAgent.name, () => {
  let redis: TestRedis;
  let client: Redis;
  let registry: NodeRegistry;
  const logs: string[] = [];
  const start = (env: Record<string, string>) =>
    startAgent({
      config: loadAgentConfig({ REDIS_URL: redis.url, TALLY_HEARTBEAT_INTERVAL_S: '1', ...env }),
      probe: new LinuxHostProbe({ nvencUnlimitedCap: 32 }),
      filesystems: new StatfsProbe(),
      registry,
      version: '9.9.9-test',
      log: (line) => logs.push(line),
    });
  const listed = async (nodeId: string) => (await registry.list()).find((n) => n.nodeId === nodeId);

  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
    registry = new NodeRegistry(client);
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it('tells where encoders push to its ingress on a node that runs ingress, and nothing on one that does not', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tally-agent-ingress-'));
    const env = (nodeId: string, role: string) => ({
      TALLY_NODE_ID: nodeId,
      TALLY_NODE_ROLE: role,
      TALLY_HOME: home,
      TALLY_WORKER_RUNTIME: 'native',
      LIVEKIT_URL: 'http://10.1.2.1:7880',
      LIVEKIT_API_KEY: 'node-key',
      LIVEKIT_API_SECRET: 'a-node-secret-of-at-least-thirty-two-chars',
      TALLY_NODE_IP: '10.1.2.3',
      TALLY_INGRESS_RTMP_PORT: '1936',
      TALLY_INGRESS_WHIP_PORT: '8086',
    });
    try {
      for (const [nodeId, role] of [
        ['agent-ingress-worker', 'worker'],
        ['agent-ingress-media', 'media'],
      ] as const) {
        const sut = await start(env(nodeId, role));
        await sut.stop();
      }
      expect((await listed('agent-ingress-worker'))?.ingress).toEqual({
        rtmpUrl: 'rtmp://10.1.2.3:1936/x',
        whipUrl: 'http://10.1.2.3:8086/w',
      });
      expect((await listed('agent-ingress-media'))?.ingress).toBeUndefined();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('reports the filesystem its media directories are on, one entry for directories that share it', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tally-agent-fs-'));
    try {
      const sut = await start({ TALLY_NODE_ID: 'agent-disks', TALLY_HOME: home, TALLY_WORKERS_DIR: join(home, 'workers') });
      const node = await listed('agent-disks');
      await sut.shutdown();

      const expected = statfsSync(home);
      expect(node?.filesystems).toHaveLength(1);
      const [fs] = node!.filesystems!;
      expect(fs).toMatchObject({
        roles: ['recordings', 'hls', 'ladders', 'scratch'],
        dirs: [join(home, 'recordings'), join(home, 'hls'), join(home, 'workers')],
        totalBytes: expected.blocks * expected.bsize,
      });
      expect(fs!.key).toMatch(/^agent-disks:\d+:\d+$/);
      expect(Math.abs(fs!.freeBytes - expected.bavail * expected.bsize)).toBeLessThan(64 * MIB);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("puts this machine's real cores and RAM into the pool", async () => {
    const sut = await start({ TALLY_NODE_ID: 'agent-measured' });

    const node = await listed('agent-measured');

    expect(node?.budget).toMatchObject(expectedBudget());
    expect(node).toMatchObject({ role: 'origin', status: 'active', version: '9.9.9-test', labels: {} });
    expect(node!.used.ramMb).toBeGreaterThan(0);
    expect(node!.used.ramMb).toBeLessThanOrEqual(Math.ceil(totalmem() / MIB));
    expect(node!.budget.nicMbps).toBeGreaterThan(0);
    await sut.shutdown();
    expect(await listed('agent-measured')).toBeUndefined();
  });

  it('reports the operator overrides and labels instead of the measurement', async () => {
    const sut = await start({
      TALLY_NODE_ID: 'agent-overridden',
      TALLY_NODE_ROLE: 'worker',
      TALLY_NODE_CPU_MILLICORES: '1234',
      TALLY_NODE_RAM_MB: '2048',
      TALLY_NODE_NIC_MBPS: '2500',
      TALLY_NODE_LABELS: 'zone=test,disk=nvme',
    });

    expect(await listed('agent-overridden')).toMatchObject({
      role: 'worker',
      budget: { cpuMillicores: 1_234, ramMb: 2_048, nicMbps: 2_500 },
      labels: { zone: 'test', disk: 'nvme' },
    });
    await sut.shutdown();
  });

  it('stays in the pool while beating, and leaves once a stopped agent’s heartbeat expires', async () => {
    const sut = await start({ TALLY_NODE_ID: 'agent-crashing' });
    const first = await listed('agent-crashing');

    // Longer than the 3 s TTL: only fresh beats keep the node listed.
    await new Promise((r) => setTimeout(r, 4_500));
    const later = await listed('agent-crashing');
    expect(later).toBeDefined();
    expect(Date.parse(later!.sentAt)).toBeGreaterThan(Date.parse(first!.sentAt));

    await sut.stop(); // no cleanup, as if the process had been killed
    expect(await listed('agent-crashing')).toBeDefined();

    await waitFor('the crashed node to leave the pool', async () => ((await listed('agent-crashing')) ? undefined : true), 15_000);
    expect(await client.sismember(NODE_KEYS.index, 'agent-crashing')).toBe(0);
  });

  it('runs from its entry point and leaves the pool at once on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-agent-'));
    const child = startChild(
      process.execPath,
      ['--import', '@swc-node/register/esm-register', join(import.meta.dirname, 'main.ts')],
      join(dir, 'agent.log'),
      { ...process.env, REDIS_URL: redis.url, TALLY_NODE_ID: 'agent-process', TALLY_HEARTBEAT_INTERVAL_S: '1' },
    );
    try {
      const node = await waitFor('the agent process to heartbeat', () => listed('agent-process'), 60_000);
      expect(node.version).toBe('0.1.0');

      await child.stop('SIGTERM');

      expect(child.process.exitCode).toBe(0);
      expect(await listed('agent-process')).toBeUndefined();
    } finally {
      await child.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

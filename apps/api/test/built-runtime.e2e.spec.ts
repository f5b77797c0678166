import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StreamView } from '@tally/contracts';
import { NodeRegistry } from '@tally/nodes';
import { ApiClient, type Child, startAppProcess, startStack, TEST_NODE_BUDGET, type TestStack, waitFor } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepOnce } from '../../worker/test/sweep.js';
import { createTenant } from './api-harness.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const logFile = (name: string) => join(tmpdir(), `tally-built-${name}-${process.pid}.log`);

/** What the kernel says the process was started with, and which shared objects it has mapped. */
function processImage(child: Child): { argv: string[]; maps: string } {
  const pid = child.process.pid!;
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  return { argv, maps: readFileSync(`/proc/${pid}/maps`, 'utf8') };
}

describe('the built runtime (npm run build, node dist/*.js)', () => {
  let stack: TestStack;
  let api: Child;
  let worker: Child;
  let agent: Child;
  const agentNode = `built-${process.pid}`;

  beforeAll(async () => {
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'pipe' });
    stack = await startStack();
    [api, worker, agent] = await Promise.all([
      startAppProcess('api', stack.env, logFile('api'), 'built'),
      startAppProcess('worker', stack.env, logFile('worker'), 'built'),
      startAppProcess(
        'agent',
        { ...stack.env, ...TEST_NODE_BUDGET, TALLY_NODE_ID: agentNode, TALLY_HEARTBEAT_INTERVAL_S: '1' },
        logFile('agent'),
        'built',
      ),
    ]);
  });
  afterAll(async () => {
    await Promise.all([api, worker, agent].map((child) => child?.stop()));
    await stack?.stop();
  });

  it('serves apps, streams and tokens from the bundle', async () => {
    const admin = new ApiClient(`http://127.0.0.1:${stack.env['TALLY_PORT']}`, stack.adminKey);
    const { app, client } = await createTenant(admin, 'built');
    const stream = await client.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: 'from dist' });
    expect(stream.status).toBe(201);
    const token = await client.post<{ token: string }>(`/v1/apps/${app.id}/streams/${stream.body.id}/tokens`, {
      identity: 'viewer-1',
      role: 'viewer',
    });
    expect(token.status).toBe(201);
    expect(token.body.token.split('.')).toHaveLength(3);
  });

  it('runs the worker and the agent from the bundle (the agent heartbeats its node)', async () => {
    const started = () => Promise.resolve(readFileSync(logFile('worker'), 'utf8').includes('tally worker running') ? true : undefined);
    await waitFor('worker start', started, 30_000);
    const redis = new Redis(stack.env['REDIS_URL']!);
    try {
      const registry = new NodeRegistry(redis);
      const node = await waitFor('built agent heartbeat', async () => (await registry.get(agentNode)) ?? undefined, 30_000);
      expect(node.nodeId).toBe(agentNode);
    } finally {
      redis.disconnect();
    }
  });

  it('runs a sweep an operator asks for on the bundled worker (its @nestjs/bullmq processor and handlers survived the build)', async () => {
    const admin = new ApiClient(`http://127.0.0.1:${stack.env['TALLY_PORT']}`, stack.adminKey);
    const report = await sweepOnce(admin, stack.env['REDIS_URL']!);
    expect(Object.keys(report)).toEqual(expect.arrayContaining(['streams', 'recordings', 'reservations']));
  });

  it('loads no TypeScript compiler in any service process', () => {
    for (const child of [api, worker, agent]) {
      const { argv, maps } = processImage(child);
      // node, V8 flags only (no --import / --require of a loader), then the bundle.
      expect(argv.slice(1, -1).every((arg) => /^--max-semi-space-size=\d+$/.test(arg))).toBe(true);
      expect(argv.at(-1)).toMatch(/\/dist\/(api|worker|agent)\.js$/);
      expect(argv.join(' ')).not.toMatch(/swc|ts-node|tsx|typescript|esbuild|\.ts\b/);
      expect(maps).not.toMatch(/swc|esbuild/);
    }
  });
});

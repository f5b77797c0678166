import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type JoinTokenView, type NodeArtifacts, type NodeList } from '@tally/contracts';
import { freePort } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from './api-harness.js';
import { addHost, forward, installOnNode, nodeHome, readableCheckout, removeHome, type TwoHosts } from './joined-node.js';

const run = promisify(execFile);
const sha256Of = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/**
 * dist/ as an installed origin has it: the bundles and their production dependencies (npm's cache
 * has them: the tests run where nothing but loopback is reachable).
 */
async function builtServices(checkout: string): Promise<void> {
  await run(process.execPath, [join(checkout, 'scripts', 'build.mjs')], { cwd: checkout });
  if (!existsSync(join(checkout, 'dist', 'node_modules')))
    await run('npm', ['install', '--omit=dev', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: join(checkout, 'dist'),
    });
}

/**
 * A node joins from a fresh host: a checkout without node_modules or a build, an empty tools
 * directory (no Node, no Go, no LiveKit binary). The origin publishes what it built, as its
 * installer does (scripts/install/artifacts.sh), and the node takes it instead of building.
 */
describe('install.sh --join on a fresh host takes the origin’s builds', () => {
  let hosts: TwoHosts;
  let sut: ApiHarness;
  let originUrl: string;
  let originHome: string;
  let manifest: NodeArtifacts;
  let freshCheckout: string;
  let freshTools: string;
  let home: string;
  const forwarders: Server[] = [];

  beforeAll(async () => {
    const origin = await readableCheckout();
    await builtServices(origin);
    originHome = mkdtempSync(join(tmpdir(), 'tally-origin-home-'));
    // What the origin's installer does at the end of its configuration step.
    await run(
      'bash',
      ['-c', 'source scripts/install/lib.sh && source scripts/install/artifacts.sh && HOME_DIR="$1" publish_artifacts', '_', originHome],
      {
        cwd: origin,
        env: { ...process.env, TALLY_USER: 'root' },
      },
    );
    manifest = JSON.parse(readFileSync(join(originHome, 'artifacts', 'manifest.json'), 'utf8')) as NodeArtifacts;

    hosts = await addHost();
    const [redisPort, apiPort] = [await freePort(), await freePort()];
    originUrl = `http://${hosts.originIp}:${apiPort}`;
    sut = await startApiHarness({
      TALLY_HOME: originHome,
      TALLY_CLUSTER_REDIS_URL: `redis://${hosts.originIp}:${redisPort}`,
      TALLY_PUBLIC_URL: originUrl,
    });
    forwarders.push(await forward(hosts.originIp, redisPort, sut.stack.redis.port));
    forwarders.push(await forward(hosts.originIp, apiPort, sut.stack.config.http.port));

    freshCheckout = mkdtempSync(join(tmpdir(), 'tally-fresh-src-'));
    chmodSync(freshCheckout, 0o755);
    const excluded = ['node_modules', './dist', './.git', 'libs/db/src/generated'].map((path) => `--exclude=${path}`);
    await run('bash', ['-c', 'tar -C "$1" "${@:3}" -cf - . | tar -C "$2" -xf -', '_', origin, freshCheckout, ...excluded]);
    freshTools = mkdtempSync(join(tmpdir(), 'tally-fresh-tools-'));
    home = nodeHome();
  }, 600_000);

  afterAll(async () => {
    if (home && existsSync(join(home, 'run', 'mode'))) await installOnNode(hosts.ns, ['--stop', '--home', home], {}, freshCheckout);
    for (const server of forwarders) server.close();
    await sut?.stop();
    await hosts?.remove();
    for (const dir of [home, originHome, freshCheckout, freshTools]) if (dir) removeHome(dir);
  });

  it('fetches the binary, the runtime and the built agent (sha256-checked), builds nothing, and heartbeats', async () => {
    const offered = (name: string) => manifest.files.find((file) => file.name === name || file.name.startsWith(name));
    for (const name of ['livekit-server', 'node-linux-', 'npm-', 'dist.tar.gz'])
      expect(offered(name), `the origin's tools lack ${name}: run scripts/provision.sh`).toBeDefined();

    const name = `fresh-${randomBytes(3).toString('hex')}`;
    const created = await sut.admin.post<JoinTokenView>('/v1/nodes/join-tokens', { name, role: 'media' });
    const started = Date.now();
    const joined = await installOnNode(
      hosts.ns,
      [
        '--join',
        originUrl,
        '--token',
        created.body.token,
        '--role',
        'media',
        '--name',
        name,
        '--insecure-http',
        '--home',
        home,
        '--offline',
        '--no-systemd',
        '--no-sysctl',
        '--node-ip',
        hosts.nodeIp,
      ],
      { TALLY_TOOLS_DIR: freshTools, TALLY_HEARTBEAT_INTERVAL_S: '1' },
      freshCheckout,
    );
    const seconds = Math.round((Date.now() - started) / 1000);
    expect(joined.code, joined.output).toBe(0);
    console.log(`install.sh --join (media) on a fresh host: ${seconds}s`);

    // What it fetched, checked against the manifest, and what it did not have to do.
    const livekit = offered('livekit-server')!;
    expect(joined.output).toContain(`livekit-server: fetched from the origin, sha256 ${livekit.sha256}`);
    expect(joined.output).toContain(`dist.tar.gz: fetched from the origin, sha256 ${offered('dist.tar.gz')!.sha256}`);
    expect(sha256Of(join(freshTools, 'bin', 'livekit-server'))).toBe(livekit.sha256);
    expect(joined.output).not.toContain('building livekit-server');
    expect(joined.output).toContain('no npm install or build here');
    expect(joined.output).not.toContain('node_modules missing or stale');
    expect(existsSync(join(freshCheckout, 'node_modules'))).toBe(false);
    expect(existsSync(join(freshCheckout, 'dist', 'agent.js'))).toBe(true);

    // The runtimes: Node from the origin's copy (checked against the pins); no Go, as nothing was built.
    const runtimes = readdirSync(join(freshTools, 'runtimes')).filter((entry) => !entry.startsWith('.'));
    expect(runtimes.filter((entry) => entry.startsWith('go-'))).toEqual([]);
    const nodeDir = runtimes.find((entry) => entry.startsWith('node-'));
    expect(readFileSync(join(freshTools, 'runtimes', nodeDir!, '.source'), 'utf8')).toContain('from the origin');
    expect(joined.output).toMatch(
      /Runtime: +Node\.js 24\.\d+\.\d+ \(npm registry package node-linux-\w+@[\d.]+, sha512 pinned; from the origin/,
    );
    expect(joined.output).toMatch(/Runtime: +Go [\d.]+: not installed/);
    expect(joined.output).toMatch(/Phases:\n(\[install\] +\d+\.\ds {2}\(\d+\) .+\n)+/);

    const nodes = (await sut.admin.get<NodeList>('/v1/nodes')).body.items;
    expect(nodes.find((node) => node.nodeId === name)?.role).toBe('media');
  }, 300_000);
});

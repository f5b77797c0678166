// A CPU profile of the API serving one control-plane route: `node … bench/control-plane/profile.ts <scenario> <connections> <seconds> <dir>`.
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createStream, createTenant } from '@tally/testing';
import { httpLoad } from '../lib/http-load.js';
import { startBenchStack } from '../lib/stack.js';
import { scenarios } from './scenarios.js';

const [name = 'stream create', connections = '10', seconds = '5', dir = '/tmp/tally-profile'] = process.argv.slice(2);
mkdirSync(dir, { recursive: true });
const bench = await startBenchStack({
  nodeBudget: { TALLY_NODE_CPU_MILLICORES: '10000000', TALLY_NODE_RAM_MB: '10000000', TALLY_NODE_NIC_MBPS: '1000000' },
  apiEnv: { NODE_OPTIONS: `--import ${join(import.meta.dirname, 'cpu-profiler.mjs')}`, TALLY_CPU_PROFILE_DIR: dir },
});
try {
  const { app, key, client } = await createTenant(bench.admin, 'bench-profile', { maxStreams: 100_000 });
  const stream = await createStream(client, app.id, 'token source');
  const all = scenarios({ apiUrl: bench.apiUrl, bareUrl: '', appId: app.id, streamId: stream.id, key: key.key });
  const scenario = all.find((s) => s.name === name);
  if (!scenario) throw new Error(`no scenario ${name}`);
  const result = await httpLoad({ ...scenario.load(), connections: Number(connections), durationS: Number(seconds) });
  process.stdout.write(`${name} at ${connections}: ${JSON.stringify(result)}\n`);
  const file = join(dir, `api-${bench.api.process.pid}.cpuprofile`);
  bench.api.process.kill('SIGUSR2');
  for (let i = 0; i < 100 && !existsSync(file); i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
  process.stdout.write(`profile: ${readdirSync(dir).join(', ')}\n`);
} finally {
  await bench.stop();
}

// bench:base-load — idle memory (PSS) and CPU of the api, worker and agent as production runs them
// (the bundles of npm run build), next to a bare Node + Fastify process measured in the same run.
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { DEFAULT_BASE_LOAD } from '@tally/capacity';
import { type Child, freePort, startAppProcess, startChild, waitFor } from '@tally/testing';
import { benchArgs } from '../lib/args.js';
import { watchTree } from '../lib/proc.js';
import { progress } from '../lib/progress.js';
import { writeResult } from '../lib/results.js';
import { startBenchStack } from '../lib/stack.js';
import { fixed, markdownTable, ratio } from '../lib/table.js';

const args = benchArgs({ window: 10, settle: 10 });
const log = (m: string) => progress('base-load', m);
const pid = (child: Child) => () => (child.process.pid === undefined ? [] : [child.process.pid]);

// The same route as bench/control-plane's baseline, in plain JavaScript (no TypeScript loader).
const BARE = `import Fastify from 'fastify';
const app = Fastify({ logger: false });
app.post('/bare', (_request, reply) => reply.code(201).send({ ok: true }));
await app.listen({ host: '127.0.0.1', port: Number(process.argv[1]) });`;

log(`runtime of the services: ${process.env['TALLY_APP_RUNTIME'] ?? 'source'}`);
const bench = await startBenchStack();
const worker = await startAppProcess('worker', bench.stack.env, join(tmpdir(), `tally-bench-base-worker-${bench.stack.nodeId}.log`));
const barePort = await freePort();
const bare = startChild(
  process.execPath,
  ['--input-type=module', '-e', BARE, String(barePort)],
  join(tmpdir(), `tally-bench-base-bare-${barePort}.log`),
);
try {
  await waitFor('bare fastify', async () => ((await fetch(`http://127.0.0.1:${barePort}/bare`, { method: 'POST' })).ok ? true : undefined));
  // One request each, so what a first request loads lazily is counted.
  await fetch(`${bench.apiUrl}/healthz`);
  log(`settling ${args.settle} s, then measuring ${args.window} s`);
  await new Promise((resolve) => setTimeout(resolve, args.settle * 1000));
  const services = [
    { name: 'bare node + fastify', roots: pid(bare) },
    { name: 'api', roots: pid(bench.api), model: DEFAULT_BASE_LOAD.api },
    { name: 'worker', roots: pid(worker), model: DEFAULT_BASE_LOAD.worker },
    { name: 'agent', roots: pid(bench.stack.agent), model: DEFAULT_BASE_LOAD.agent },
  ];
  const usage = await Promise.all(services.map((s) => watchTree(s.roots, args.window * 1000)));
  const bareMb = usage[0]!.pssMb;
  const rows = services.map((s, i) => ({ name: s.name, ...usage[i]!, modelMb: s.model?.ramMb }));
  const table = markdownTable(
    ['process', 'PSS MB', 'RSS MB', 'CPU % of a core', 'vs bare node + fastify', 'capacity model base load MB'],
    rows.map((r) => [r.name, fixed(r.pssMb), fixed(r.rssMb), fixed(r.cpuMillicores / 10, 1), ratio(r.pssMb, bareMb), r.modelMb ?? '']),
  );
  const file = writeResult('base-load', { args, runtime: process.env['TALLY_APP_RUNTIME'] ?? 'source', rows });
  process.stdout.write(`## Idle base load\n\n${table}\n\nJSON: ${file}\n`);
} finally {
  await bare.stop();
  await worker.stop();
  await bench.stop();
}

// bench:control-plane — admission throughput of the API next to a bare Fastify route, and the race check.
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { freePort, startAppProcess, startChild, waitFor } from '@tally/testing';
import { createStream, createTenant } from '@tally/testing';
import { benchArgs } from '../lib/args.js';
import { httpLoad } from '../lib/http-load.js';
import { processTree, sampleTree, voluntarySwitches } from '../lib/proc.js';
import { progress } from '../lib/progress.js';
import { writeResult } from '../lib/results.js';
import { startBenchStack } from '../lib/stack.js';
import { fixed, markdownTable, ratio } from '../lib/table.js';
import { streamCreateByAppCount } from './app-count.js';
import { combineRounds, roundRatios, type Slice } from './rounds.js';
import { type Ceiling, measureCeilings } from './ceilings.js';
import { raceCheck } from './race.js';
import { scenarios } from './scenarios.js';

const args = benchArgs({
  connections: [1, 10, 100],
  duration: 6,
  raceRequests: 1000,
  raceQuota: 10,
  appCounts: [10, 1_000, 10_000],
  appCountSamples: 300,
  appCountConcurrency: 4,
  /** Comma-separated scenario names to run besides the bare route (all when empty), for short runs while developing. */
  only: '',
  /** 1: also drive a stream row's INSERT and LiveKit's CreateRoom alone, at the most connections, for as long as a scenario. */
  ceilings: 1,
  /**
   * Seconds of uncounted load on the bare route, token mint and capacity/check (10 connections) before
   * the measured runs: V8 still compiles the api's request path for its first seconds of load, which
   * otherwise lands in the first rows (docs/capacity.md). 0 measures from cold.
   */
  warmup: 3,
  /**
   * Each connection count's runs are split into this many rounds (bare route, then each scenario,
   * `duration / rounds` s each), so that the bare route and the routes compared with it are
   * measured seconds apart, under the same load from the rest of the host; the ratio of each round
   * is reported beside the whole run's.
   */
  rounds: 3,
});
const log = (m: string) => progress('control-plane', m);
const BARE = 'bare fastify route';

log('starting Postgres, Redis, livekit-server, agent and the API');
// The node holds every stream a create phase makes before the end phase ends them (a stream costs
// 32 MB, 50 millicores and 2.5 Mbps): the budget is raised so that admission, not the node, is measured.
const bench = await startBenchStack({
  nodeBudget: { TALLY_NODE_CPU_MILLICORES: '10000000', TALLY_NODE_RAM_MB: '10000000', TALLY_NODE_NIC_MBPS: '1000000' },
});
const barePort = await freePort();
const bare = startChild(
  process.execPath,
  ['--import', '@swc-node/register/esm-register', join(import.meta.dirname, 'bare-server.ts'), String(barePort)],
  join(tmpdir(), `tally-bench-bare-${barePort}.log`),
);
const secondPort = await freePort();
const secondApi = await startAppProcess(
  'api',
  { ...bench.stack.env, TALLY_PORT: String(secondPort) },
  join(tmpdir(), `tally-bench-api2-${secondPort}.log`),
);
try {
  await waitFor('bare fastify', async () => ((await fetch(`http://127.0.0.1:${barePort}/bare`, { method: 'POST' })).ok ? true : undefined));
  const { app, key, client } = await createTenant(bench.admin, 'bench-throughput', { maxStreams: 100_000 });
  const stream = await createStream(client, app.id, 'token source');
  const all = scenarios({
    apiUrl: bench.apiUrl,
    bareUrl: `http://127.0.0.1:${barePort}`,
    appId: app.id,
    streamId: stream.id,
    key: key.key,
  });

  // CPU time of the process serving each run, per request: steadier than req/s on a shared host,
  // where the ratio of the two processes' CPU per request is what req/s tends to once both are CPU-bound.
  // The stack's (the API, Postgres, Redis, livekit-server, the agent: every process this bench started
  // but the bare route) says what a request costs the platform as a whole. Sleeps per request of the
  // server's event loop and of this process's (the load generator's): a client faster than the
  // server falls asleep once per batch of answers, and waking it costs the server (docs/capacity.md).
  const stackPids = () => processTree([process.pid]).filter((pid) => pid !== process.pid && pid !== bare.process.pid);
  const WARMED = new Set([BARE, 'bare token mint', 'bare token mint batched', 'token mint', 'capacity/check']);
  if (args.warmup > 0) {
    log(`warming up the bare route, the bare token mints, token mint and capacity/check for ${args.warmup} s each (not counted)`);
    for (const scenario of all.filter((s) => WARMED.has(s.name)))
      await httpLoad({ ...scenario.load(), connections: 10, durationS: args.warmup });
  }
  // Scenarios run for a number of requests (the end phase) run once, in the last round.
  const slice = args.duration / args.rounds;
  const slices: Slice[] = [];
  for (const connections of args.connections) {
    for (let round = 1; round <= args.rounds; round += 1) {
      for (const scenario of all) {
        if (args.only !== '' && scenario.name !== BARE && !args.only.split(',').includes(scenario.name)) continue;
        const load = scenario.load();
        if (load.amount === 0 || (load.amount !== undefined && round < args.rounds)) continue;
        const durationS = load.amount === undefined ? slice : args.duration;
        log(
          `${scenario.name} at ${connections} connection(s), round ${round}/${args.rounds}, ${load.amount === undefined ? `${durationS} s` : `× ${load.amount}`}`,
        );
        const onBare = scenario.name === BARE || scenario.served === 'bare';
        const server = (onBare ? bare : bench.api).process.pid;
        const servers = server === undefined ? [] : [server];
        const [before, stackBefore] = [sampleTree(servers), sampleTree(stackPids())];
        const sleepsBefore = [voluntarySwitches(server ?? 0), voluntarySwitches(process.pid)] as const;
        const result = await httpLoad({ ...load, connections, durationS });
        const [after, stackAfter] = [sampleTree(servers), sampleTree(stackPids())];
        const sleepsAfter = [voluntarySwitches(server ?? 0), voluntarySwitches(process.pid)] as const;
        slices.push({
          scenario: scenario.name,
          connections,
          round,
          result,
          cpuSeconds: after.cpuSeconds - before.cpuSeconds,
          stackCpuSeconds: onBare ? 0 : stackAfter.cpuSeconds - stackBefore.cpuSeconds,
          serverSleeps: sleepsAfter[0] - sleepsBefore[0],
          clientSleeps: sleepsAfter[1] - sleepsBefore[1],
        });
      }
    }
  }
  const rows = combineRounds(slices);

  let ceilings: Ceiling[] = [];
  if (args.ceilings === 1) {
    const concurrency = Math.max(...args.connections);
    log(`a stream row's INSERT and LiveKit's CreateRoom alone, ${concurrency} at a time, ${args.duration} s each`);
    const { url, apiKey, apiSecret } = bench.stack.livekit;
    ceilings = await measureCeilings({
      databaseUrl: bench.stack.config.databaseUrl,
      livekit: { url, apiKey, apiSecret },
      appId: app.id,
      concurrency,
      durationS: args.duration,
    });
  }

  log(`race: ${args.raceRequests} concurrent creates across two API processes, quota ${args.raceQuota}`);
  const race = await raceCheck({
    admin: bench.admin,
    apiUrls: [bench.apiUrl, `http://127.0.0.1:${secondPort}`],
    requests: args.raceRequests,
    quota: args.raceQuota,
  });

  const byApps = await streamCreateByAppCount({
    apiUrl: bench.apiUrl,
    key: key.key,
    appId: app.id,
    databaseUrl: bench.stack.config.databaseUrl,
    redisUrl: bench.stack.config.redisUrl,
    appCounts: args.appCounts,
    samples: args.appCountSamples,
    concurrency: args.appCountConcurrency,
    log,
  });
  const fewest = byApps[0]?.p50Ms ?? 0;

  const bareAt = (connections: number) => rows.find((r) => r.scenario === BARE && r.connections === connections);
  const table = markdownTable(
    [
      'scenario',
      'connections',
      'req/s',
      'p50 ms',
      'p99 ms',
      'vs bare route',
      'vs bare, each round',
      'CPU µs/req',
      'bare CPU / CPU',
      'stack CPU µs/req',
      'server sleeps/req',
      'client sleeps/req',
      'non-2xx',
      'errors',
    ],
    rows.map((r) => [
      r.scenario,
      r.connections,
      fixed(r.result.reqPerSec),
      fixed(r.result.p50Ms, 1),
      fixed(r.result.p99Ms, 1),
      ratio(r.result.reqPerSec, bareAt(r.connections)?.result.reqPerSec ?? 0),
      r.scenario === BARE ? '' : roundRatios(slices, r.scenario, r.connections, BARE),
      fixed(r.cpuUsPerRequest),
      ratio(bareAt(r.connections)?.cpuUsPerRequest ?? 0, r.cpuUsPerRequest),
      r.scenario === BARE ? '' : fixed(r.stackCpuUsPerRequest),
      fixed(r.serverSleepsPerRequest, 3),
      fixed(r.clientSleepsPerRequest, 3),
      r.result.non2xx,
      r.result.errors,
    ]),
  );
  const raceTable = markdownTable(
    [
      'concurrent creates',
      'API processes',
      'quota',
      'admitted (201)',
      'refused (429)',
      'other',
      'streams counted by usage',
      'over-admissions',
    ],
    [[race.requests, 2, race.quota, race.admitted, race.refused, race.other, race.usageUsed, race.overAdmissions]],
  );
  const appsTable = markdownTable(
    [
      'stream create with',
      'samples',
      'p50 ms',
      'p99 ms',
      'mean ms',
      'p50 vs fewest apps',
      'capacity/check p50 ms',
      'capacity/check p99 ms',
    ],
    byApps.map((r) => [
      `${r.apps.toLocaleString('en-US')} apps`,
      r.samples,
      fixed(r.p50Ms, 1),
      fixed(r.p99Ms, 1),
      fixed(r.meanMs, 1),
      ratio(r.p50Ms, fewest),
      fixed(r.checkP50Ms, 1),
      fixed(r.checkP99Ms, 1),
    ]),
  );
  const ceilingsTable = markdownTable(
    ['operation alone', 'concurrency', 'ops/s', 'p50 ms', 'p99 ms', 'server CPU µs/op', 'caller CPU µs/op'],
    ceilings.map((c) => [
      c.operation,
      c.concurrency,
      fixed(c.opsPerSec),
      fixed(c.p50Ms, 1),
      fixed(c.p99Ms, 1),
      fixed(c.serverCpuUsPerOp),
      fixed(c.clientCpuUsPerOp),
    ]),
  );
  const file = writeResult('control-plane', { args, rows, slices, ceilings, race, byApps });
  process.stdout.write(
    `## Control plane throughput\n\n${table}\n\n${ceilings.length > 0 ? `## A stream create's side effects alone\n\n${ceilingsTable}\n\n` : ''}## Admission race\n\n${raceTable}\n\n## Stream create by number of apps\n\n${appsTable}\n\nJSON: ${file}\n`,
  );
  if (race.overAdmissions !== 0) process.exitCode = 1;
  // Admission reads one app's policy: the 10,000-app p50 must stay within 1.5× of the 10-app one.
  const most = byApps.at(-1)?.p50Ms ?? 0;
  if (fewest > 0 && most > 1.5 * fewest) process.exitCode = 1;
} finally {
  await secondApi.stop();
  await bare.stop();
  await bench.stop();
}

/**
 * Webhook delivery through the real outbox: N events staged in Postgres transactions by
 * WebhookOutbox, claimed from Postgres and delivered by the worker process to a loopback receiver that verifies
 * every signature with the `standardwebhooks` library. The worker is killed with SIGKILL once
 * mid-run and started again. Reports deliveries/s, event→receipt latency, duplicates and lost
 * events, next to a bare loop of signed POSTs from Node to the same receiver (the baseline).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPrismaClient, runMigrations } from '@tally/db';
import {
  appCommand,
  type Child,
  createDatabase,
  startAppProcess,
  startChild,
  startPostgres,
  startStack,
  TEMPLATE_DATABASE,
  waitFor,
} from '@tally/testing';
import { DeliveryWake, newWebhookSecret, sealSecret, type StagedEvent, WebhookOutbox } from '@tally/webhooks';
import { benchArgs } from '../lib/args.js';
import { progress } from '../lib/progress.js';
import { writeResult } from '../lib/results.js';
import { quantile } from '../lib/stats.js';
import { fixed, markdownTable, ratio } from '../lib/table.js';
import { bareLoop } from './bare-loop.js';
import { CpuAccount, type CpuSnapshot, perDelivery, processCpuSeconds } from './cpu-account.js';
import { VerifyingReceiver } from './receiver.js';

const args = benchArgs({
  events: 20_000,
  apps: 4,
  appConcurrency: 32,
  killAt: 0.4,
  // Events the worker delivers before the backlog is released (at least one per app): its boot is timed on them.
  warmUp: 4,
  drainTimeoutS: 180,
  paced: 500,
  pacedPerSecond: 50,
});
const log = (message: string) => progress('webhooks', message);
/** The backlog's transactions, staged at once and committed together when all are staged. */
const STAGING_TRANSACTIONS = 8;

const postgres = await startPostgres();
await runMigrations(await createDatabase(postgres.url, TEMPLATE_DATABASE));
const stack = await startStack({ postgresUrl: postgres.url });
const receiver = new VerifyingReceiver();
await receiver.start();
const prisma = createPrismaClient(stack.config.databaseUrl);
const wake = new DeliveryWake(stack.config.redisUrl);
let worker: Child | undefined;
const workerEnv = { ...stack.env, TALLY_WEBHOOK_APP_CONCURRENCY: String(args.appConcurrency) };
// TALLY_BENCH_WORKER_CPU_PROF=<dir>: the worker started after the SIGKILL (stopped gracefully at the
// end) writes a V8 CPU profile there, for the per-delivery profile in docs/webhooks.md.
const cpuProfDir = process.env['TALLY_BENCH_WORKER_CPU_PROF'];
const startWorker = async (n: number) => {
  const log = join(tmpdir(), `tally-bench-webhooks-worker-${stack.nodeId}-${n}.log`);
  if (!cpuProfDir) return startAppProcess('worker', workerEnv, log);
  const preload = fileURLToPath(new URL('./cpu-profile.mjs', import.meta.url));
  return startChild(process.execPath, ['--import', preload, ...appCommand('worker')], log, { ...process.env, ...workerEnv });
};

try {
  const sample = (i: number) => ({
    id: `str_${String(i).padStart(16, '0')}`,
    appId: 'app_benchbenchbench0',
    name: 'bench',
    room: 'bench',
    status: 'ended' as const,
    publishers: 0,
    participants: 0,
    createdAt: new Date().toISOString(),
    startedAt: new Date().toISOString(),
    endedAt: new Date().toISOString(),
    endReason: 'ended_by_api',
  });
  const concurrency = args.apps * args.appConcurrency;

  const cpu = new CpuAccount(postgres.url);
  // The baseline runs before and after the drain, and the drain is compared with their mean: load
  // from elsewhere on the shared host then weighs on both sides alike, not on whichever ran alone.
  const runBareLoop = async (when: string) => {
    log(`bare loop ${when}: ${args.events} signed POSTs, ${concurrency} at a time`);
    const from = cpu.snapshot(0);
    const { perSecond } = await bareLoop(
      receiver,
      // An event's body as the worker sends it (the stored event, in jsonb's key order).
      (id) =>
        JSON.stringify({ id, data: sample(0), type: 'stream.ended', appId: 'app_bench00000000000', createdAt: new Date().toISOString() }),
      args.events,
      concurrency,
    );
    return { perSecond, cpuUsPerRequest: perDelivery(from, cpu.snapshot(0), args.events) };
  };
  const bareBefore = await runBareLoop('before the drain');
  receiver.reset();

  const apps: string[] = [];
  for (let a = 0; a < args.apps; a += 1) {
    const appId = `app_bench${String(a).padStart(11, '0')}`;
    const secret = newWebhookSecret();
    await prisma.app.create({
      data: {
        id: appId,
        name: `bench ${a}`,
        webhookUrl: receiver.url(`/${appId}`, secret),
        webhookSecret: sealSecret(stack.config.secretsKey!, secret, appId),
      },
    });
    apps.push(appId);
  }

  // Throughput: the backlog is staged through the outbox (N events in the same kind of transactions
  // a state change uses, several at once) while the worker runs, held uncommitted until all are
  // staged, then released at once: the worker, already running (its boot is measured on its own,
  // with one warm-up event per app), drains it and is SIGKILLed part way; another is started. The
  // drain counts from the release to the last receipt, the kill and the restart included.
  // Latency: events staged one per transaction at a steady pace while the worker runs.
  const outbox = new WebhookOutbox(wake);
  const stagedAt = new Map<string, number>();
  const stage = async (from: number, to: number, beforeCommit: () => Promise<void> = () => Promise.resolve()) => {
    const at = Date.now();
    const staged = await prisma.$transaction(
      async (tx) => {
        const out: (StagedEvent | undefined)[] = [];
        for (let j = from; j < to; j += 1) out.push(await outbox.stage(tx, apps[j % apps.length]!, 'stream.ended', sample(j)));
        await beforeCommit();
        return out;
      },
      { timeout: 600_000 },
    );
    for (const s of staged) if (s) stagedAt.set(s.eventId, at);
    await outbox.flush(staged);
    return staged;
  };

  log('starting the worker; one warm-up event per app');
  const spawned = Date.now();
  worker = await startWorker(0);
  const warmUpEvents = Math.max(args.apps, args.warmUp);
  const warmUp = (await stage(args.events + args.paced, args.events + args.paced + warmUpEvents)).flatMap((s) => (s ? [s.eventId] : []));
  const warmUpIds = new Set(warmUp);
  await waitFor('the warm-up events', () => Promise.resolve(warmUp.every((id) => receiver.firstSeen.has(id)) || undefined), 60_000);
  const bootS = (Math.min(...warmUp.map((id) => receiver.firstSeen.get(id)!)) - spawned) / 1000;

  log(`staging ${args.events} events over ${args.apps} apps through the outbox in ${STAGING_TRANSACTIONS} transactions, held open`);
  const stagingStarted = Date.now();
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let ready = 0;
  const share = Math.ceil(args.events / STAGING_TRANSACTIONS);
  const staging = Array.from({ length: STAGING_TRANSACTIONS }, (_, t) =>
    stage(t * share, Math.min(args.events, (t + 1) * share), async () => {
      ready += 1;
      if (ready === STAGING_TRANSACTIONS) release();
      await released;
    }),
  );
  await released;
  const producedS = (Date.now() - stagingStarted) / 1000;

  log(`released: draining with the running worker, SIGKILLed at ${args.killAt * 100} % received`);
  const started = Date.now();
  // The workers' CPU during the drain: the first's from the release to its kill, then the second's (boot included).
  const firstWorkerAtRelease = processCpuSeconds(worker.process.pid);
  let firstWorkerAtKill = firstWorkerAtRelease;
  let cpuAtKill: CpuSnapshot | undefined;
  const xacts = async () =>
    Number(
      (
        await prisma.$queryRaw<
          { n: bigint }[]
        >`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`
      )[0]?.n ?? 0,
    );
  const xactsAtRelease = await xacts();
  const cpuAtRelease = cpu.snapshot(0);
  let killedAt: number | undefined;
  let receivedAtKill = 0;
  let restarted: Promise<void> | undefined;
  let backlog = new Set<string>();
  const killer = setInterval(() => {
    if (killedAt !== undefined || receiver.firstSeen.size - warmUp.length < args.events * args.killAt) return;
    killedAt = Date.now();
    receivedAtKill = receiver.firstSeen.size - warmUp.length;
    const dying = worker!;
    firstWorkerAtKill = processCpuSeconds(dying.process.pid);
    cpuAtKill = cpu.snapshot(firstWorkerAtKill - firstWorkerAtRelease);
    restarted = dying.stop('SIGKILL').then(async () => {
      log(`worker killed at ${receivedAtKill} received; starting another`);
      worker = await startWorker(1);
    });
  }, 20);
  await Promise.all(staging);
  backlog = new Set([...stagedAt.keys()].filter((id) => !warmUpIds.has(id)));
  const deadline = Date.now() + args.drainTimeoutS * 1000;
  const missing = () => [...backlog].some((id) => !receiver.firstSeen.has(id));
  while (Date.now() < deadline && missing()) await new Promise((r) => setTimeout(r, 200));
  clearInterval(killer);
  await restarted;
  const cpuAtEnd = cpu.snapshot(
    killedAt === undefined
      ? processCpuSeconds(worker.process.pid) - firstWorkerAtRelease
      : firstWorkerAtKill - firstWorkerAtRelease + processCpuSeconds(worker.process.pid),
  );
  const drainCpuUs = perDelivery(cpuAtRelease, cpuAtEnd, args.events);
  // Each worker's share: the first's from the release to the kill, the second's (its boot included) after.
  const firstCpuUs = cpuAtKill && perDelivery(cpuAtRelease, cpuAtKill, Math.max(1, receivedAtKill));
  const secondCpuUs = cpuAtKill && perDelivery(cpuAtKill, cpuAtEnd, Math.max(1, args.events - receivedAtKill));
  // PostgreSQL publishes a backend's counters when it goes idle, at most once a second.
  await new Promise((r) => setTimeout(r, 1_100));
  const xactsPerDelivery = ((await xacts()) - xactsAtRelease) / args.events;
  // Its requests carry ids of their own: the outbox's receipts, duplicates and losses are untouched.
  const bareAfter = await runBareLoop('after the drain');
  const bare = { perSecond: (bareBefore.perSecond + bareAfter.perSecond) / 2 };
  const bareCpuUs = perDelivery(
    { worker: 0, postgres: 0, bench: 0, hostBusy: 0 },
    {
      worker: 0,
      postgres: 0,
      bench: (bareBefore.cpuUsPerRequest.receiver + bareAfter.cpuUsPerRequest.receiver) / 2e6,
      hostBusy:
        (bareBefore.cpuUsPerRequest.receiver +
          bareBefore.cpuUsPerRequest.other +
          bareAfter.cpuUsPerRequest.receiver +
          bareAfter.cpuUsPerRequest.other) /
        2e6,
    },
    1,
  );
  // CPU for CPU: what the bare loop spends on a request (client and receiver) against what the outbox spends on a delivery.
  const cpuRatio = bareCpuUs.receiver / (drainCpuUs.worker + drainCpuUs.postgres + drainCpuUs.receiver);

  log(`latency: ${args.paced} events, one per transaction, ${args.pacedPerSecond}/s`);
  const paced = new Set<string>();
  for (let i = 0; i < args.paced; i += 1) {
    const due = Date.now() + 1000 / args.pacedPerSecond;
    const before = stagedAt.size;
    await stage(args.events + i, args.events + i + 1);
    for (const id of [...stagedAt.keys()].slice(before)) paced.add(id);
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
  }
  const pacedDeadline = Date.now() + 60_000;
  while (Date.now() < pacedDeadline && [...paced].some((id) => !receiver.firstSeen.has(id))) await new Promise((r) => setTimeout(r, 100));

  const received = [...backlog].filter((id) => receiver.firstSeen.has(id));
  const lost = stagedAt.size - [...stagedAt.keys()].filter((id) => receiver.firstSeen.has(id)).length;
  const lastReceipt = Math.max(...received.map((id) => receiver.firstSeen.get(id)!));
  const perSecond = received.length / ((lastReceipt - started) / 1000);
  const receipts = received.map((id) => receiver.firstSeen.get(id)!).sort((a, b) => a - b);
  // The rate while the first worker ran: from the release to the kill.
  const runningPerSecond = killedAt === undefined ? undefined : receivedAtKill / ((killedAt - started) / 1000);
  // The longest pause in receipts after the kill: requests the dying worker had already written still
  // arrive just after it, so the first receipt after the kill says nothing.
  const afterKill = killedAt === undefined ? [] : [killedAt, ...receipts.filter((t) => t > killedAt!)];
  const gaps = afterKill.slice(1).map((t, i) => t - afterKill[i]!);
  const gapS = gaps.length === 0 ? undefined : Math.max(...gaps) / 1000;
  // The second worker's rate: from the end of that pause to the last receipt.
  const gapEnd = gapS === undefined ? undefined : afterKill[gaps.indexOf(gapS * 1000) + 1];
  const afterRestart = gapEnd === undefined ? [] : receipts.filter((t) => t >= gapEnd);
  const restartedPerSecond = afterRestart.length < 2 ? undefined : (afterRestart.length - 1) / ((lastReceipt - afterRestart[0]!) / 1000);
  const latencies = [...paced].filter((id) => receiver.firstSeen.has(id)).map((id) => receiver.firstSeen.get(id)! - stagedAt.get(id)!);
  // A receipt precedes its row's delivered mark by up to one batch: wait for the marks (bounded).
  const countDelivered = () => prisma.webhookDelivery.count({ where: { status: 'delivered' } });
  const marksDeadline = Date.now() + 10_000;
  let delivered = await countDelivered();
  while (delivered < stagedAt.size - lost && Date.now() < marksDeadline) {
    await new Promise((r) => setTimeout(r, 100));
    delivered = await countDelivered();
  }
  const p50 = quantile(latencies, 0.5);
  const p99 = quantile(latencies, 0.99);

  const dash = ['–', '–', '–', '–'];
  const rows: (string | number)[][] = [
    [
      'outbox → worker → receiver, drain (SIGKILL and restart included)',
      args.events,
      fixed(perSecond),
      fixed(p50),
      fixed(p99),
      receiver.duplicates,
      lost,
      ratio(perSecond, bare.perSecond),
    ],
    ['first worker, release → kill', receivedAtKill, fixed(runningPerSecond), ...dash, ratio(runningPerSecond ?? 0, bare.perSecond)],
    [
      'second worker, after its boot',
      afterRestart.length,
      fixed(restartedPerSecond),
      ...dash,
      ratio(restartedPerSecond ?? 0, bare.perSecond),
    ],
    [
      `bare loop of signed POSTs (baseline: mean of ${fixed(bareBefore.perSecond)}/s before and ${fixed(bareAfter.perSecond)}/s after the drain)`,
      args.events,
      fixed(bare.perSecond),
      ...dash,
      '1×',
    ],
  ];
  const table = markdownTable(
    ['path', 'events', 'deliveries/s', 'p50 event→receipt ms', 'p99 ms', 'duplicates', 'lost', 'vs bare loop'],
    rows,
  );
  process.stdout.write(`${table}\n\n`);
  const cpuTable = markdownTable(
    [
      'CPU µs per delivery (from /proc)',
      'worker',
      'PostgreSQL',
      'receiver (bench process)',
      'rest of the host',
      'PostgreSQL transactions per delivery',
    ],
    [
      [
        'outbox drain',
        fixed(drainCpuUs.worker),
        fixed(drainCpuUs.postgres),
        fixed(drainCpuUs.receiver),
        fixed(drainCpuUs.other),
        fixed(xactsPerDelivery, 3),
      ],
      ...(
        [
          ['first worker, release → kill', firstCpuUs],
          ['second worker, boot included', secondCpuUs],
        ] as const
      ).flatMap(([name, us]) => (us ? [[name, fixed(us.worker), fixed(us.postgres), fixed(us.receiver), fixed(us.other), '–']] : [])),
      ['bare loop (client and receiver share the bench process)', '–', '–', fixed(bareCpuUs.receiver), fixed(bareCpuUs.other), '–'],
    ],
  );
  process.stdout.write(`${cpuTable}\n\n`);
  process.stdout.write(
    `CPU for CPU: the bare loop spends ${fixed(bareCpuUs.receiver)} µs on a request, the outbox ${fixed(drainCpuUs.worker + drainCpuUs.postgres + drainCpuUs.receiver)} µs on a delivery (${ratio(cpuRatio, 1)}).\n`,
  );
  process.stdout.write(
    `Drain: ${fixed(perSecond)} deliveries/s from the release of the backlog to the last receipt, the SIGKILL, the pause and the restart included ` +
      `(${fixed((lastReceipt - started) / 1000, 1)} s); the first worker's boot (spawn to first receipt, before the release) took ${fixed(bootS, 1)} s; ` +
      `the longest pause in deliveries after the kill was ${fixed(gapS, 1)} s (the new worker's boot; the dead worker's claims lapse meanwhile).\n`,
  );
  process.stdout.write(
    `${args.apps} apps × ${args.appConcurrency} attempts in flight; backlog staged in ${STAGING_TRANSACTIONS} transactions at ${fixed(backlog.size / producedS)} events/s, committed together; ` +
      `latency from ${paced.size} events staged one per transaction at ${args.pacedPerSecond}/s; ` +
      `worker SIGKILLed ${killedAt === undefined ? 'never (finished first)' : `${((killedAt - started) / 1000).toFixed(1)} s after the release`}; ` +
      `${receiver.refused} requests refused by the verifier; ${delivered} deliveries recorded delivered.\n`,
  );
  const path = writeResult('webhooks', {
    args,
    outbox: {
      perSecond,
      p50Ms: p50,
      p99Ms: p99,
      duplicates: receiver.duplicates,
      lost,
      refused: receiver.refused,
      stagedPerSecond: backlog.size / producedS,
      killedAfterMs: killedAt === undefined ? null : killedAt - started,
      bootS,
      runningPerSecond: runningPerSecond ?? null,
      restartedPerSecond: restartedPerSecond ?? null,
      stoppedAfterKillS: gapS ?? null,
      // First receipts per 100 ms from the release (where the drain went fast, slow or stopped).
      receiptsPer100Ms: receipts.reduce<number[]>((buckets, t) => {
        const i = Math.floor((t - started) / 100);
        while (buckets.length <= i) buckets.push(0);
        buckets[i]! += 1;
        return buckets;
      }, []),
      deliveredRows: delivered,
      cpuUsPerDelivery: drainCpuUs,
      firstWorkerCpuUsPerDelivery: firstCpuUs ?? null,
      secondWorkerCpuUsPerDelivery: secondCpuUs ?? null,
      postgresTransactionsPerDelivery: xactsPerDelivery,
    },
    bare: { ...bare, cpuUsPerRequest: bareCpuUs, before: bareBefore, after: bareAfter },
    cpuRatio,
    ratio: perSecond / bare.perSecond,
  });
  log(`wrote ${path}`);
  if (lost > 0) process.exitCode = 1;
} finally {
  await worker?.stop();
  await wake.close();
  await prisma.$disconnect();
  await receiver.stop();
  await stack.stop();
  await postgres.stop();
}

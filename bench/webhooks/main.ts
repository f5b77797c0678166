/**
 * Webhook delivery through the real outbox: N events staged in Postgres transactions by
 * WebhookOutbox, queued per app, delivered by the worker process to a loopback receiver that verifies
 * every signature with the `standardwebhooks` library. The worker is killed with SIGKILL once
 * mid-run and started again. Reports deliveries/s, event→receipt latency, duplicates and lost
 * events, next to a bare loop of signed POSTs from Node to the same receiver (the baseline).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPrismaClient, runMigrations } from '@tally/db';
import { type Child, createDatabase, startAppProcess, startPostgres, startStack, TEMPLATE_DATABASE } from '@tally/testing';
import { DeliveryQueue, newWebhookSecret, sealSecret, type StagedEvent, WebhookOutbox } from '@tally/webhooks';
import { benchArgs } from '../lib/args.js';
import { progress } from '../lib/progress.js';
import { writeResult } from '../lib/results.js';
import { quantile } from '../lib/stats.js';
import { fixed, markdownTable, ratio } from '../lib/table.js';
import { bareLoop } from './bare-loop.js';
import { VerifyingReceiver } from './receiver.js';

const args = benchArgs({ events: 20_000, apps: 4, appConcurrency: 32, batch: 200, killAt: 0.4, drainTimeoutS: 180 });
const log = (message: string) => progress('webhooks', message);

const postgres = await startPostgres();
await runMigrations(await createDatabase(postgres.url, TEMPLATE_DATABASE));
const stack = await startStack({ postgresUrl: postgres.url });
const receiver = new VerifyingReceiver();
await receiver.start();
const prisma = createPrismaClient(stack.config.databaseUrl);
const queue = new DeliveryQueue(stack.config.redisUrl);
let worker: Child | undefined;
const workerEnv = { ...stack.env, TALLY_WEBHOOK_APP_CONCURRENCY: String(args.appConcurrency) };
const startWorker = async (n: number) =>
  startAppProcess('worker', workerEnv, join(tmpdir(), `tally-bench-webhooks-worker-${stack.nodeId}-${n}.log`));

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

  log(`bare loop: ${args.events} signed POSTs, ${concurrency} at a time`);
  const bare = await bareLoop(
    receiver,
    JSON.stringify({ id: 'evt_0000000000000000', type: 'stream.ended', data: sample(0) }),
    args.events,
    concurrency,
  );
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
  worker = await startWorker(0);

  log(`outbox: ${args.events} events over ${args.apps} apps, worker killed with SIGKILL at ${args.killAt * 100} % received`);
  const outbox = new WebhookOutbox(queue);
  const stagedAt = new Map<string, number>();
  let killedAt: number | undefined;
  const killer = setInterval(() => {
    if (killedAt !== undefined || receiver.firstSeen.size < args.events * args.killAt) return;
    killedAt = Date.now();
    const dying = worker!;
    void dying.stop('SIGKILL').then(async () => {
      log(`worker killed at ${receiver.firstSeen.size} received; starting another`);
      worker = await startWorker(1);
    });
  }, 20);
  const started = Date.now();
  for (let i = 0; i < args.events; i += args.batch) {
    const at = Date.now();
    const staged = await prisma.$transaction(
      async (tx) => {
        const out: (StagedEvent | undefined)[] = [];
        for (let j = i; j < Math.min(args.events, i + args.batch); j += 1) {
          out.push(await outbox.stage(tx, apps[j % apps.length]!, 'stream.ended', sample(j)));
        }
        return out;
      },
      { timeout: 120_000 },
    );
    for (const s of staged) if (s) stagedAt.set(s.eventId, at);
    await outbox.flush(staged);
  }
  const producedS = (Date.now() - started) / 1000;
  log(`staged ${stagedAt.size} events in ${producedS.toFixed(1)} s; waiting for the rest`);

  const deadline = Date.now() + args.drainTimeoutS * 1000;
  while (Date.now() < deadline && [...stagedAt.keys()].some((id) => !receiver.firstSeen.has(id)))
    await new Promise((r) => setTimeout(r, 200));
  clearInterval(killer);

  const received = [...stagedAt.entries()].filter(([id]) => receiver.firstSeen.has(id));
  const lost = stagedAt.size - received.length;
  const receipts = received.map(([id]) => receiver.firstSeen.get(id)!);
  const latencies = received.map(([id, at]) => receiver.firstSeen.get(id)! - at);
  const lastReceipt = Math.max(...receipts);
  const perSecond = received.length / ((lastReceipt - started) / 1000);
  const delivered = await prisma.webhookDelivery.count({ where: { status: 'delivered' } });
  const p50 = quantile(latencies, 0.5);
  const p99 = quantile(latencies, 0.99);

  const rows: (string | number)[][] = [
    [
      'outbox → worker → receiver',
      args.events,
      fixed(perSecond),
      fixed(p50),
      fixed(p99),
      receiver.duplicates,
      lost,
      ratio(perSecond, bare.perSecond),
    ],
    ['bare loop of signed POSTs (baseline)', args.events, fixed(bare.perSecond), '–', '–', '–', '–', '1×'],
  ];
  const table = markdownTable(
    ['path', 'events', 'deliveries/s', 'p50 event→receipt ms', 'p99 ms', 'duplicates', 'lost', 'vs bare loop'],
    rows,
  );
  process.stdout.write(`${table}\n\n`);
  process.stdout.write(
    `${args.apps} apps × ${args.appConcurrency} attempts in flight; staged in transactions of ${args.batch} at ${fixed(stagedAt.size / producedS)} events/s; ` +
      `worker SIGKILLed ${killedAt === undefined ? 'never (finished first)' : `${((killedAt - started) / 1000).toFixed(1)} s in`}; ` +
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
      stagedPerSecond: stagedAt.size / producedS,
      killedAfterMs: killedAt === undefined ? null : killedAt - started,
      deliveredRows: delivered,
    },
    bare,
    ratio: perSecond / bare.perSecond,
  });
  log(`wrote ${path}`);
  if (lost > 0) process.exitCode = 1;
} finally {
  await worker?.stop();
  await queue.close();
  await prisma.$disconnect();
  await receiver.stop();
  await stack.stop();
  await postgres.stop();
}

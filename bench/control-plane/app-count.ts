import { performance } from 'node:perf_hooks';
import { CapacityLedger, toStoredPolicy } from '@tally/admission';
import { DEFAULT_MODEL } from '@tally/capacity';
import { createPrismaClient } from '@tally/db';
import { Redis } from 'ioredis';

export type AppCountRow = Readonly<{
  apps: number;
  samples: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  /** `POST …/capacity/check` at the same app count, as many samples. */
  checkP50Ms: number;
  checkP99Ms: number;
}>;

type Options = Readonly<{
  apiUrl: string;
  key: string;
  appId: string;
  databaseUrl: string;
  redisUrl: string;
  appCounts: readonly number[];
  samples: number;
  concurrency: number;
  log: (message: string) => void;
}>;

/**
 * Latency of `POST /v1/apps/{id}/streams` (and of its capacity/check) for one app while 10, 1,000, 10,000 … apps exist. The other
 * apps are written straight into Postgres, and their policies into the capacity ledger (as the
 * API's startup sync does), one in a hundred with a guarantee that fits; each created stream is ended, untimed.
 */
export async function streamCreateByAppCount(options: Options): Promise<AppCountRow[]> {
  const prisma = createPrismaClient(options.databaseUrl);
  const redis = new Redis(options.redisUrl);
  const ledger = new CapacityLedger(redis);
  const rows: AppCountRow[] = [];
  try {
    let existing = await prisma.app.count();
    for (const target of options.appCounts) {
      options.log(`seeding apps up to ${target}`);
      for (let start = existing; start < target; start += 1_000) {
        const batch = Array.from({ length: Math.min(1_000, target - start) }, (_, i) => {
          const n = start + i;
          return { id: `app_${n.toString(36).padStart(16, '0')}`, name: `bench ${n}`, guarantees: n % 100 === 0 ? { cameras: 1 } : {} };
        });
        await prisma.app.createMany({ data: batch, skipDuplicates: true });
        for (const app of batch) {
          await ledger.writePolicy(app.id, toStoredPolicy({ appId: app.id, guarantees: app.guarantees, limits: {} }, DEFAULT_MODEL));
        }
      }
      existing = Math.max(existing, await prisma.app.count());
      options.log(`${existing} apps: ${options.samples} stream creates, ${options.concurrency} at a time`);
      rows.push({ apps: existing, ...(await measure(options)) });
    }
    return rows;
  } finally {
    redis.disconnect();
    await prisma.$disconnect();
  }
}

async function measure(options: Options): Promise<Omit<AppCountRow, 'apps'>> {
  const streams = `${options.apiUrl}/v1/apps/${options.appId}/streams`;
  const headers = { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' };
  const createAndEnd = async (): Promise<number> => {
    const started = performance.now();
    const response = await fetch(streams, { method: 'POST', headers, body: JSON.stringify({ name: 'bench' }) });
    const elapsed = performance.now() - started;
    const body = (await response.json()) as { id?: string };
    if (response.status !== 201 || body.id === undefined) throw new Error(`stream create: ${response.status} ${JSON.stringify(body)}`);
    await (await fetch(`${streams}/${body.id}`, { method: 'DELETE', headers: { authorization: headers.authorization } })).arrayBuffer();
    return elapsed;
  };
  const check = async (): Promise<number> => {
    const started = performance.now();
    const response = await fetch(`${options.apiUrl}/v1/apps/${options.appId}/capacity/check`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ kind: 'stream', count: 1 }),
    });
    const elapsed = performance.now() - started;
    if (response.status !== 200) throw new Error(`capacity/check: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
    return elapsed;
  };
  for (let i = 0; i < 10; i += 1) await createAndEnd();
  const creates = summary(await sample(options, createAndEnd));
  const checks = summary(await sample(options, check));
  return { ...creates, checkP50Ms: checks.p50Ms, checkP99Ms: checks.p99Ms };
}

/** `options.samples` timings of `once`, `options.concurrency` at a time. */
async function sample(options: Options, once: () => Promise<number>): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < options.samples) {
        next += 1;
        latencies.push(await once());
      }
    }),
  );
  return latencies;
}

function summary(latencies: number[]): Readonly<{ samples: number; p50Ms: number; p99Ms: number; meanMs: number }> {
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { samples: latencies.length, p50Ms: at(0.5), p99Ms: at(0.99), meanMs: latencies.reduce((a, b) => a + b, 0) / latencies.length };
}

import { Injectable } from '@nestjs/common';
import type { Health } from '@tally/contracts';
import { HealthProbes } from './health.probes.js';

const PROBE_TIMEOUT_MS = 2_000;

type Check = Health['checks']['postgres'];

@Injectable()
export class HealthService {
  constructor(private readonly probes: HealthProbes) {}

  async check(): Promise<Health> {
    const [postgres, redis, livekit] = await Promise.all([
      timed(() => this.probes.postgres()),
      timed(() => this.probes.redisPing()),
      timed(() => this.probes.livekitRooms()),
    ]);
    const ok = postgres.ok && redis.ok && livekit.ok;
    return { status: ok ? 'ok' : 'degraded', checks: { postgres, redis, livekit } };
  }
}

async function timed(probe: () => Promise<void>): Promise<Check> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
      }),
    ]);
    return { ok: true, ms: elapsed(started) };
  } catch (error) {
    return { ok: false, ms: elapsed(started), error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}

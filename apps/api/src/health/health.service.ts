import { Injectable, Logger } from '@nestjs/common';
import type { Health } from '@tally/contracts';
import { HealthProbes } from './health.probes.js';

const PROBE_TIMEOUT_MS = 2_000;

type Check = Health['checks']['postgres'];

const logger = new Logger('HealthService');

@Injectable()
export class HealthService {
  constructor(private readonly probes: HealthProbes) {}

  async check(): Promise<Health> {
    const [postgres, redis, livekit] = await Promise.all([
      timed('postgres', () => this.probes.postgres()),
      timed('redis', () => this.probes.redisPing()),
      timed('livekit', () => this.probes.livekitRooms()),
    ]);
    const ok = postgres.ok && redis.ok && livekit.ok;
    return { status: ok ? 'ok' : 'degraded', checks: { postgres, redis, livekit } };
  }
}

/**
 * The public answer says that a dependency failed or timed out, not what it said: its message
 * (addresses, credentials in a URL) goes to the log.
 */
async function timed(name: string, probe: () => Promise<void>): Promise<Check> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ProbeTimeout()), PROBE_TIMEOUT_MS);
      }),
    ]);
    return { ok: true, ms: elapsed(started) };
  } catch (error) {
    if (error instanceof ProbeTimeout) return { ok: false, ms: elapsed(started), error: error.message };
    logger.warn(`${name} health probe failed: ${error instanceof Error ? error.message : String(error)}`);
    return { ok: false, ms: elapsed(started), error: 'unavailable' };
  } finally {
    clearTimeout(timer);
  }
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}

class ProbeTimeout extends Error {
  constructor() {
    super(`no answer within ${PROBE_TIMEOUT_MS} ms`);
  }
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EnvSchema, type Env } from './config.schema.js';

export type Config = Readonly<{
  home: string;
  http: Readonly<{ host: string; port: number; publicUrl: string }>;
  adminKey: string | undefined;
  logLevel: Env['TALLY_LOG_LEVEL'];
  databaseUrl: string;
  redisUrl: string;
  livekit: Readonly<{ url: string; publicUrl: string; apiKey: string; apiSecret: string }>;
  /** A capacity profile written by bench/capacity; the built-in measured defaults when absent. */
  capacityProfilePath: string | undefined;
  streams: Readonly<{ joinTimeoutS: number }>;
  sweepIntervalS: number;
}>;

export class ConfigError extends Error {}

/** Parses the environment once; throws naming every invalid variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return Object.freeze({
    home: e.TALLY_HOME,
    http: Object.freeze({
      host: e.TALLY_HOST,
      port: e.TALLY_PORT,
      publicUrl: e.TALLY_PUBLIC_URL ?? `http://127.0.0.1:${e.TALLY_PORT}`,
    }),
    adminKey: e.TALLY_ADMIN_KEY ?? readAdminKeyFile(e.TALLY_HOME),
    logLevel: e.TALLY_LOG_LEVEL,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    livekit: Object.freeze({
      url: e.LIVEKIT_URL,
      publicUrl: e.LIVEKIT_PUBLIC_URL,
      apiKey: e.LIVEKIT_API_KEY,
      apiSecret: e.LIVEKIT_API_SECRET,
    }),
    capacityProfilePath: e.TALLY_CAPACITY_PROFILE,
    streams: Object.freeze({
      joinTimeoutS: e.TALLY_STREAM_JOIN_TIMEOUT_S,
    }),
    sweepIntervalS: e.TALLY_SWEEP_INTERVAL_S,
  });
}

/** install.sh writes the admin key to $TALLY_HOME/admin.key (mode 600). */
function readAdminKeyFile(home: string): string | undefined {
  try {
    const key = readFileSync(join(home, 'admin.key'), 'utf8').trim();
    return key.length > 0 ? key : undefined;
  } catch {
    return undefined;
  }
}

import { isIP } from 'node:net';
import { z } from 'zod';
import { RedisSentinelEnvSchema } from './redis.js';

const port = z.coerce.number().int().min(1).max(65_535);
const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `must be a ${protocols.join(' or ')} URL`,
  );

/** A positive whole number, or unset (an empty value is unset too, as `.env.example` leaves it). */
const optionalCount = z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).optional());

/** pino's levels: the API's, the worker's and the agents' `TALLY_LOG_LEVEL`. */
export const LogLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
export type LogLevel = z.infer<typeof LogLevel>;

/** Every variable Tally reads; `.env.example` documents each one. */
export const EnvSchema = z.object({
  TALLY_HOME: z.string().min(1).default('/var/lib/tally'),
  TALLY_HOST: z.string().min(1).default('0.0.0.0'),
  TALLY_PORT: port.default(8080),
  TALLY_PUBLIC_URL: url(['http:', 'https:']).optional(),
  TALLY_ADMIN_KEY: z.string().min(24, 'must be at least 24 characters').optional(),
  TALLY_METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  TALLY_LOG_LEVEL: LogLevel.default('info'),
  DATABASE_URL: url(['postgresql:', 'postgres:']),
  REDIS_URL: url(['redis:', 'rediss:']),
  ...RedisSentinelEnvSchema.shape,
  LIVEKIT_URL: url(['http:', 'https:']),
  LIVEKIT_PUBLIC_URL: url(['ws:', 'wss:']),
  LIVEKIT_API_KEY: z.string().min(3),
  LIVEKIT_API_SECRET: z.string().min(32, 'must be at least 32 characters'),
  TALLY_CAPACITY_PROFILE: z.string().min(1).optional(),
  TALLY_DISK_HORIZON_S: z.coerce.number().int().min(10).max(86_400).default(120),
  TALLY_STREAM_JOIN_TIMEOUT_S: z.coerce.number().int().min(10).default(300),
  TALLY_SWEEP_INTERVAL_S: z.coerce.number().int().min(1).default(30),
  TALLY_METERING_SYNC_INTERVAL_S: z.coerce.number().int().min(1).max(3600).default(30),
  TALLY_METERING_RETENTION_MONTHS: z.coerce.number().int().min(1).max(120).default(13),
  TALLY_USAGE_EXPORT_URL: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
  ),
  TALLY_USAGE_EXPORT_SECRET: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).optional()),
  TALLY_SECRETS_KEY: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'must be 64 hex characters (32 bytes)')
    .optional(),
  TALLY_RECORDINGS_DIR: z.string().min(1).optional(),
  TALLY_S3_BUCKET: z.string().min(1).optional(),
  TALLY_S3_ENDPOINT: url(['http:', 'https:']).optional(),
  TALLY_S3_PUBLIC_ENDPOINT: url(['http:', 'https:']).optional(),
  TALLY_S3_REGION: z.string().min(1).default('us-east-1'),
  TALLY_S3_ACCESS_KEY: z.string().min(1).optional(),
  TALLY_S3_SECRET_KEY: z.string().min(1).optional(),
  TALLY_S3_FORCE_PATH_STYLE: z.stringbool().default(true),
  TALLY_WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default('5s,5m,30m,2h,5h,10h,10h')
    .transform((v, ctx) => {
      const waits = v.split(',').map((w) => parseDurationMs(w.trim()));
      if (waits.length === 0 || waits.length > 50 || waits.some((w) => w === undefined)) {
        ctx.addIssue({ code: 'custom', message: 'must be 1 to 50 comma-separated durations such as 5s,5m,2h (units ms, s, m, h, d)' });
        return z.NEVER;
      }
      return waits as number[];
    }),
  TALLY_WEBHOOK_DISABLE_AFTER_DAYS: z.coerce.number().positive().default(5),
  TALLY_EVENT_RETENTION_DAYS: z.coerce.number().positive().default(30),
  TALLY_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  TALLY_WEBHOOK_APP_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(16),
  TALLY_WEBHOOK_REDELIVER_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  TALLY_WEBHOOK_ALLOW_CIDRS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((c) => c.trim())
        .filter((c) => c !== ''),
    )
    .refine((cidrs) => cidrs.every(isCidr), 'must be a comma-separated list of CIDR ranges, e.g. 10.0.0.0/8,fd00::/8'),
  TALLY_CLUSTER_REDIS_URL: url(['redis:', 'rediss:']).optional(),
  TALLY_CLUSTER_S3_ENDPOINT: url(['http:', 'https:']).optional(),
  // The bundled object store's key broker (scripts/install/object-store-keys.mjs, ADR 0045): a unix
  // socket; set, each joined worker/gpu node gets an account of its own, deleted when it is removed.
  TALLY_OBJECT_STORE_KEYS_SOCKET: z.preprocess((v) => (v === '' ? undefined : v), z.string().startsWith('/').optional()),
  // The origin's PostgreSQL as `control` nodes reach it (install.sh --control-node; ADR 0043).
  TALLY_CLUSTER_DATABASE_URL: z.preprocess((v) => (v === '' ? undefined : v), url(['postgresql:', 'postgres:']).optional()),
  // The origin's Sentinels as joined nodes reach them (host:port, comma-separated), and the
  // passwords of the replication and Sentinel users handed to --redis-replica nodes (ADR 0040).
  TALLY_CLUSTER_REDIS_SENTINELS: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .regex(/^[^\s,]+:\d+(,[^\s,]+:\d+)*$/, 'host:port, comma-separated')
      .optional(),
  ),
  TALLY_CLUSTER_REDIS_REPLICATION_PASSWORD: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(16).optional()),
  TALLY_CLUSTER_REDIS_SENTINEL_PASSWORD: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(16).optional()),
  TALLY_CLUSTER_TURN_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/, 'must be a host name or IPv4 address')
    .optional(),
  TALLY_CLUSTER_TURN_PORT: z.coerce.number().int().min(1).max(65_535).default(5_349),
  TALLY_CLUSTER_TURN_SECRET: z.string().min(16).optional(),
  TALLY_JOIN_TOKEN_TTL_S: z.coerce.number().int().min(60).default(3_600),
  TALLY_CAMERA_IDLE_TIMEOUT_S: z.coerce.number().int().min(1).default(15),
  TALLY_CAMERA_VIEWER_LEASE_S: z.coerce.number().int().min(3).default(30),
  TALLY_HLS_DIR: z.string().min(1).optional(),
  TALLY_HLS_RETENTION_S: z.coerce.number().int().min(1).default(300),
  TALLY_RATE_LIMIT_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).default(6_000),
  TALLY_RATE_LIMIT_STARTS_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  TALLY_RATE_LIMIT_ADMIN_PER_MINUTE: z.coerce.number().int().min(1).default(60_000),
  TALLY_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  TALLY_RATE_LIMIT_WINDOW_S: z.coerce.number().int().min(1).max(3_600).default(10),
  TALLY_RATE_LIMIT_START_WINDOW_S: z.coerce.number().int().min(1).max(3_600).default(5),
  TALLY_MAX_STORAGE_MB: optionalCount,
  TALLY_RECORDING_RETENTION_DAYS: optionalCount,
  TALLY_MAX_RECORDING_DURATION_S: optionalCount,
  TALLY_DISK_STOP_FREE_PERCENT: z.coerce.number().min(0).max(50).default(2),
  TALLY_DISK_STOP_FREE_MIN_MB: z.coerce.number().min(0).default(2),
  TALLY_DISK_STOP_FREE_MAX_MB: z.coerce.number().min(0).default(2_048),
  TALLY_DISK_ALERT_FREE_PERCENT: z.coerce.number().min(0).max(90).default(10),
  TALLY_DISK_ALERT_FREE_MAX_MB: z.coerce.number().min(0).default(20_480),
  TALLY_DISK_RESERVE_MAX_MB: z.coerce.number().min(0).default(256),
  TALLY_DISK_CHECK_INTERVAL_MS: z.coerce.number().int().min(200).max(60_000).default(2_000),
  TALLY_APP_RETENTION_S: z.coerce
    .number()
    .int()
    .min(0)
    .default(7 * 86_400),
});
export type Env = z.infer<typeof EnvSchema>;

function isCidr(cidr: string): boolean {
  const [address = '', bits] = cidr.split('/');
  const family = isIP(address);
  if (family === 0) return false;
  if (bits === undefined) return true;
  const prefix = Number(bits);
  return /^\d+$/.test(bits) && prefix <= (family === 4 ? 32 : 128);
}

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `300ms`, `5s`, `1.5h` … as milliseconds; undefined for anything else. */
function parseDurationMs(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text);
  if (!match) return undefined;
  return Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
}

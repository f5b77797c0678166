import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EnvSchema, type Env } from './config.schema.js';
import { redisTarget, type RedisTarget } from './redis.js';

export type Config = Readonly<{
  home: string;
  http: Readonly<{ host: string; port: number; publicUrl: string }>;
  adminKey: string | undefined;
  /** Bearer token for GET /metrics; without one, only loopback clients may scrape. */
  metricsToken: string | undefined;
  logLevel: Env['TALLY_LOG_LEVEL'];
  databaseUrl: string;
  redisUrl: string;
  /** Where every Redis client of the process connects: `redisUrl`, or the primary the Sentinels name. */
  redis: RedisTarget;
  livekit: Readonly<{ url: string; publicUrl: string; apiKey: string; apiSecret: string }>;
  /** A capacity profile written by bench/capacity; the built-in measured defaults when absent. */
  capacityProfilePath: string | undefined;
  /** Seconds of writing a writer reserves on its filesystem at admission (docs/adr/0021-disk-in-admission.md). */
  diskHorizonS: number;
  streams: Readonly<{ joinTimeoutS: number }>;
  sweepIntervalS: number;
  /**
   * Usage metering (docs/adr/0028-usage-metering.md): how often the worker copies usage from rows,
   * closes intervals whose end event was lost and rolls hours up; how long hourly usage is kept.
   */
  metering: Readonly<{
    syncIntervalS: number;
    retentionMonths: number;
    /** Where each closed hour's usage goes as CloudEvents, signed with Standard Webhooks; unset: no export. */
    export: Readonly<{ url: string; secret: string }> | undefined;
  }>;
  /** Seals secrets Tally must read back (webhook signing secrets); absent, those features refuse to start. */
  secretsKey: Buffer | undefined;
  recordings: Readonly<{
    /** Finished local recordings: `<dir>/<appId>/<recordingId>.<ext>`; egress writes into `<dir>/.incoming/` first. */
    dir: string;
    /** When set, egress uploads to this S3-compatible bucket instead of the local directory. */
    s3: S3Config | undefined;
  }>;
  webhooks: Readonly<{
    /** The waits before the 2nd, 3rd … attempt (each ±20 % jitter); after the last, a failure is dead. */
    retryScheduleMs: readonly number[];
    /** An endpoint failing this long (every attempt, no success in between) is disabled. */
    disableAfterMs: number;
    timeoutMs: number;
    /** Attempts in flight per app, across worker processes: a slow receiver costs only its own app. */
    appConcurrency: number;
    /** Redeliveries an app may request per minute. */
    redeliverPerMinute: number;
    /** Ranges webhooks may reach although private or loopback (on-premises receivers). */
    allowCidrs: readonly string[];
  }>;
  /** Delivered or dead webhook events (with their deliveries) and applied LiveKit events are deleted after this. */
  eventRetentionMs: number;
  /**
   * Joining nodes: the Redis URL they are handed (unset: this origin accepts no nodes), how long a join
   * token lives, and where they reach the object store (unset: `recordings.s3.endpoint`).
   */
  cluster: Readonly<{
    redisUrl: string | undefined;
    joinTokenTtlS: number;
    s3Endpoint: string | undefined;
    /** The object store's key broker (a unix socket): set, each worker/gpu node gets a key of its own (docs/adr/0045). */
    objectStoreKeysSocket: string | undefined;
    /** The origin's PostgreSQL as `control` nodes reach it; undefined: no control node may join (docs/adr/0043). */
    databaseUrl: string | undefined;
    /** The Sentinels as joined nodes reach them; undefined without Sentinel (docs/adr/0040-redis-sentinel.md). */
    sentinels: readonly string[] | undefined;
    /** What --redis-replica nodes are handed: the replication and Sentinel users' passwords. */
    replicationPassword: string | undefined;
    sentinelPassword: string | undefined;
    /** The origin's TURN/TLS server, handed to media nodes that join so their participants get it too. */
    turn: ClusterTurnConfig | undefined;
  }>;
  /**
   * A camera that sends no frame for `idleTimeoutS` is disconnected. A viewer's reservation is a lease
   * the serving API process renews every third of `viewerLeaseS`; if that process dies, it lapses.
   */
  cameras: Readonly<{ idleTimeoutS: number; viewerLeaseS: number }>;
  /** Live HLS: egress writes `<dir>/<appId>/<streamId>/<sessionId>/`; segments are deleted this long after the session stops. */
  hls: Readonly<{ dir: string; retentionS: number }>;
  /** A deleted app's recordings, ladders and HLS files (and its rows) are deleted this long after DELETE. */
  apps: Readonly<{ retentionS: number }>;
  /** What an app gets where its own setting is null (PATCH /v1/apps/{id}); undefined: no cap, recordings kept. */
  appDefaults: Readonly<{
    maxStorageMb: number | undefined;
    recordingRetentionDays: number | undefined;
    maxRecordingDurationS: number | undefined;
  }>;
  /**
   * The watermarks of every filesystem Tally writes media to (libs/capacity `diskWatermarks`): free
   * space kept when writers are stopped, and where the low-disk alert fires, as a fraction of the
   * filesystem's size within bounds; and how often the worker compares them with `statfs`.
   */
  disk: Readonly<{
    watermarks: Readonly<{
      stopFreeFraction: number;
      stopFreeMinBytes: number;
      stopFreeMaxBytes: number;
      alertFreeFraction: number;
      alertFreeMaxBytes: number;
    }>;
    /** The reserve file the worker holds on the recordings filesystem is the stop watermark's size up to this (0: none). */
    reserveMaxBytes: number;
    checkIntervalMs: number;
  }>;
  /**
   * Per-app request rates (docs/rate-limits.md): the defaults an app gets unless the operator set its
   * own, the admin key's own budget, and the fixed windows they are counted in (the window is the burst).
   */
  rateLimit: Readonly<{
    requestsPerMinute: number;
    startsPerMinute: number;
    adminPerMinute: number;
    /** Failed authentications per minute from one client address before bad keys get 429 instead of 401. */
    authFailuresPerMinute: number;
    windowS: number;
    startWindowS: number;
  }>;
}>;

export type S3Config = Readonly<{
  bucket: string;
  endpoint: string | undefined;
  /** Where players fetch download links (signed for this host); unset: `endpoint`. */
  publicEndpoint: string | undefined;
  region: string;
  accessKey: string;
  secretKey: string;
  forcePathStyle: boolean;
}>;

/** coturn on the origin (`turns:host:port`) and the secret its per-participant credentials are minted from. */
export type ClusterTurnConfig = Readonly<{ host: string; port: number; secret: string }>;

export class ConfigError extends Error {}

const MB = 1024 * 1024;

/** Parses the environment once; throws naming every invalid variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const redis = redisTarget(e.REDIS_URL, e);
  if ('error' in redis) throw new ConfigError(`invalid configuration:\n  ${redis.error.variable}: ${redis.error.message}`);
  return Object.freeze({
    home: e.TALLY_HOME,
    http: Object.freeze({
      host: e.TALLY_HOST,
      port: e.TALLY_PORT,
      publicUrl: e.TALLY_PUBLIC_URL ?? `http://127.0.0.1:${e.TALLY_PORT}`,
    }),
    adminKey: e.TALLY_ADMIN_KEY ?? readAdminKeyFile(e.TALLY_HOME),
    metricsToken: e.TALLY_METRICS_TOKEN,
    logLevel: e.TALLY_LOG_LEVEL,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    redis,
    livekit: Object.freeze({
      url: e.LIVEKIT_URL,
      publicUrl: e.LIVEKIT_PUBLIC_URL,
      apiKey: e.LIVEKIT_API_KEY,
      apiSecret: e.LIVEKIT_API_SECRET,
    }),
    capacityProfilePath: e.TALLY_CAPACITY_PROFILE,
    diskHorizonS: e.TALLY_DISK_HORIZON_S,
    streams: Object.freeze({
      joinTimeoutS: e.TALLY_STREAM_JOIN_TIMEOUT_S,
    }),
    sweepIntervalS: e.TALLY_SWEEP_INTERVAL_S,
    metering: Object.freeze({
      syncIntervalS: e.TALLY_METERING_SYNC_INTERVAL_S,
      retentionMonths: e.TALLY_METERING_RETENTION_MONTHS,
      export: usageExport(e),
    }),
    secretsKey: e.TALLY_SECRETS_KEY === undefined ? undefined : Buffer.from(e.TALLY_SECRETS_KEY, 'hex'),
    recordings: Object.freeze({ dir: e.TALLY_RECORDINGS_DIR ?? join(e.TALLY_HOME, 'recordings'), s3: s3Config(e) }),
    webhooks: Object.freeze({
      retryScheduleMs: Object.freeze(e.TALLY_WEBHOOK_RETRY_SCHEDULE),
      disableAfterMs: Math.round(e.TALLY_WEBHOOK_DISABLE_AFTER_DAYS * 86_400_000),
      timeoutMs: e.TALLY_WEBHOOK_TIMEOUT_MS,
      appConcurrency: e.TALLY_WEBHOOK_APP_CONCURRENCY,
      redeliverPerMinute: e.TALLY_WEBHOOK_REDELIVER_PER_MINUTE,
      allowCidrs: Object.freeze(e.TALLY_WEBHOOK_ALLOW_CIDRS),
    }),
    eventRetentionMs: Math.round(e.TALLY_EVENT_RETENTION_DAYS * 86_400_000),
    cluster: Object.freeze({
      redisUrl: e.TALLY_CLUSTER_REDIS_URL,
      joinTokenTtlS: e.TALLY_JOIN_TOKEN_TTL_S,
      s3Endpoint: e.TALLY_CLUSTER_S3_ENDPOINT,
      objectStoreKeysSocket: e.TALLY_OBJECT_STORE_KEYS_SOCKET,
      databaseUrl: e.TALLY_CLUSTER_DATABASE_URL,
      sentinels: e.TALLY_CLUSTER_REDIS_SENTINELS === undefined ? undefined : Object.freeze(e.TALLY_CLUSTER_REDIS_SENTINELS.split(',')),
      replicationPassword: e.TALLY_CLUSTER_REDIS_REPLICATION_PASSWORD,
      sentinelPassword: e.TALLY_CLUSTER_REDIS_SENTINEL_PASSWORD,
      turn: clusterTurn(e),
    }),
    cameras: Object.freeze({ idleTimeoutS: e.TALLY_CAMERA_IDLE_TIMEOUT_S, viewerLeaseS: e.TALLY_CAMERA_VIEWER_LEASE_S }),
    hls: Object.freeze({ dir: e.TALLY_HLS_DIR ?? join(e.TALLY_HOME, 'hls'), retentionS: e.TALLY_HLS_RETENTION_S }),
    apps: Object.freeze({ retentionS: e.TALLY_APP_RETENTION_S }),
    appDefaults: Object.freeze({
      maxStorageMb: e.TALLY_MAX_STORAGE_MB,
      recordingRetentionDays: e.TALLY_RECORDING_RETENTION_DAYS,
      maxRecordingDurationS: e.TALLY_MAX_RECORDING_DURATION_S,
    }),
    disk: Object.freeze({
      watermarks: Object.freeze({
        stopFreeFraction: e.TALLY_DISK_STOP_FREE_PERCENT / 100,
        stopFreeMinBytes: Math.round(e.TALLY_DISK_STOP_FREE_MIN_MB * MB),
        stopFreeMaxBytes: Math.round(Math.max(e.TALLY_DISK_STOP_FREE_MAX_MB, e.TALLY_DISK_STOP_FREE_MIN_MB) * MB),
        alertFreeFraction: e.TALLY_DISK_ALERT_FREE_PERCENT / 100,
        alertFreeMaxBytes: Math.round(e.TALLY_DISK_ALERT_FREE_MAX_MB * MB),
      }),
      reserveMaxBytes: Math.round(e.TALLY_DISK_RESERVE_MAX_MB * MB),
      checkIntervalMs: e.TALLY_DISK_CHECK_INTERVAL_MS,
    }),
    rateLimit: Object.freeze({
      requestsPerMinute: e.TALLY_RATE_LIMIT_REQUESTS_PER_MINUTE,
      startsPerMinute: e.TALLY_RATE_LIMIT_STARTS_PER_MINUTE,
      adminPerMinute: e.TALLY_RATE_LIMIT_ADMIN_PER_MINUTE,
      authFailuresPerMinute: e.TALLY_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE,
      windowS: e.TALLY_RATE_LIMIT_WINDOW_S,
      startWindowS: e.TALLY_RATE_LIMIT_START_WINDOW_S,
    }),
  });
}

function usageExport(e: Env): Config['metering']['export'] {
  if (e.TALLY_USAGE_EXPORT_URL === undefined) return undefined;
  if (e.TALLY_USAGE_EXPORT_SECRET === undefined) {
    throw new ConfigError('invalid configuration:\n  TALLY_USAGE_EXPORT_SECRET: required when TALLY_USAGE_EXPORT_URL is set');
  }
  return Object.freeze({ url: e.TALLY_USAGE_EXPORT_URL, secret: e.TALLY_USAGE_EXPORT_SECRET });
}

function s3Config(e: Env): S3Config | undefined {
  if (e.TALLY_S3_BUCKET === undefined) return undefined;
  if (e.TALLY_S3_ACCESS_KEY === undefined || e.TALLY_S3_SECRET_KEY === undefined) {
    throw new ConfigError('invalid configuration:\n  TALLY_S3_ACCESS_KEY, TALLY_S3_SECRET_KEY: required when TALLY_S3_BUCKET is set');
  }
  return Object.freeze({
    bucket: e.TALLY_S3_BUCKET,
    endpoint: e.TALLY_S3_ENDPOINT,
    publicEndpoint: e.TALLY_S3_PUBLIC_ENDPOINT,
    region: e.TALLY_S3_REGION,
    accessKey: e.TALLY_S3_ACCESS_KEY,
    secretKey: e.TALLY_S3_SECRET_KEY,
    forcePathStyle: e.TALLY_S3_FORCE_PATH_STYLE,
  });
}

/** The origin's TURN/TLS server that joined media nodes hand their participants (docs/adr/0042). */
function clusterTurn(e: Env): ClusterTurnConfig | undefined {
  if (e.TALLY_CLUSTER_TURN_HOST === undefined && e.TALLY_CLUSTER_TURN_SECRET === undefined) return undefined;
  if (e.TALLY_CLUSTER_TURN_HOST === undefined || e.TALLY_CLUSTER_TURN_SECRET === undefined) {
    throw new ConfigError('invalid configuration:\n  TALLY_CLUSTER_TURN_HOST, TALLY_CLUSTER_TURN_SECRET: set both or neither');
  }
  return Object.freeze({ host: e.TALLY_CLUSTER_TURN_HOST, port: e.TALLY_CLUSTER_TURN_PORT, secret: e.TALLY_CLUSTER_TURN_SECRET });
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

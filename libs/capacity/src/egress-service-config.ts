import type { NodeBudget } from './budget.js';
import { egressAdmission, type EgressCpuCost } from './egress-config.js';
import type { CapacityModel } from './model.js';

export type EgressLogLevel = 'debug' | 'info' | 'warn' | 'error';

export type EgressServiceConfigInput = Readonly<{
  apiKey: string;
  apiSecret: string;
  /** livekit-server as egress (and the Chrome it starts) reaches it: ws:// or wss://. */
  wsUrl: string;
  /** The Redis livekit-server uses: redis://[[user]:password@]host:port[/db] or rediss://. */
  redisUrl: string;
  /** The Sentinels that name the primary, when Redis runs with Sentinel (`redisUrl` then gives only user, password, db). */
  redisSentinel?: LivekitRedisSentinel;
  /**
   * GET / answers the service's status: every running request (room names, output locations, S3
   * credentials). Egress binds it on every address, so Tally's own workers leave it out (no port).
   */
  healthPort?: number;
  /** Serves the RoomComposite web template to Chrome on localhost. */
  templatePort: number;
  prometheusPort?: number;
  logLevel?: EgressLogLevel;
  model: CapacityModel;
  node: NodeBudget;
  /** The cores egress sees on its host (cgroup quota, else CPU count). */
  hostCpus: number;
  /**
   * Chrome in its user-namespace sandbox. Chrome refuses it as root, and Docker's default seccomp
   * profile forbids the namespaces: only an unprivileged native worker can have it.
   */
  chromeSandbox: boolean;
}>;

/** A Sentinel group as LiveKit's services take it: the name the primary is monitored under and the Sentinels. */
export type LivekitRedisSentinel = Readonly<{ name: string; addresses: readonly Readonly<{ host: string; port: number }>[] }>;

/** LiveKit's `redis:` section (protocol's RedisConfig), shared by livekit-server, egress and ingress. */
export type EgressRedisConfig = Readonly<{
  address?: string;
  username?: string;
  password?: string;
  db?: number;
  use_tls?: boolean;
  sentinel_master_name?: string;
  sentinel_addresses?: readonly string[];
}>;

/** The egress v1.8.6 service config (pkg/config/service.go, base.go) Tally writes. */
export type EgressServiceConfig = Readonly<{
  api_key: string;
  api_secret: string;
  ws_url: string;
  redis: EgressRedisConfig;
  health_port?: number;
  template_port: number;
  prometheus_port?: number;
  logging: Readonly<{ level: EgressLogLevel }>;
  /** Lets Chrome (RoomComposite) connect to a ws:// livekit-server. */
  insecure: boolean;
  /** Chrome (RoomComposite) runs in its sandbox (user namespaces): the untrusted publishers' media it composes stays confined. */
  enable_chrome_sandbox: boolean;
  cpu_cost: EgressCpuCost;
}>;

/**
 * The whole config for one egress service, its admission derived from the capacity model.
 * Egress reads YAML; JSON is YAML, so write `JSON.stringify(config)` to a file (`--config`) or
 * into `EGRESS_CONFIG_BODY`.
 */
export function renderEgressServiceConfig(input: EgressServiceConfigInput): EgressServiceConfig {
  const ws = new URL(input.wsUrl);
  if (ws.protocol !== 'ws:' && ws.protocol !== 'wss:') throw new RangeError(`wsUrl must be ws:// or wss://, got ${input.wsUrl}`);
  for (const [name, port] of [
    ['healthPort', input.healthPort],
    ['templatePort', input.templatePort],
    ['prometheusPort', input.prometheusPort],
  ] as const) {
    if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65_536))
      throw new RangeError(`${name} must be a TCP port, got ${port}`);
  }
  return {
    api_key: input.apiKey,
    api_secret: input.apiSecret,
    ws_url: input.wsUrl,
    redis: egressRedisConfig(input.redisUrl, input.redisSentinel),
    ...(input.healthPort === undefined ? {} : { health_port: input.healthPort }),
    template_port: input.templatePort,
    ...(input.prometheusPort === undefined ? {} : { prometheus_port: input.prometheusPort }),
    logging: { level: input.logLevel ?? 'info' },
    insecure: ws.protocol === 'ws:',
    enable_chrome_sandbox: input.chromeSandbox,
    cpu_cost: egressAdmission(input.model, input.node, input.hostCpus).cpuCost,
  };
}

/**
 * LiveKit's `redis:` section for a Redis URL; with a Sentinel group, the Sentinels replace the
 * address (they are asked without credentials; the URL's user signs in to the servers; docs/adr/0040-redis-sentinel.md).
 */
export function egressRedisConfig(redisUrl: string, sentinel?: LivekitRedisSentinel): EgressRedisConfig {
  const url = new URL(redisUrl);
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new RangeError(`redisUrl must be redis:// or rediss://, got ${url.protocol}`);
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw new RangeError(`redisUrl has an invalid database number: ${url.pathname}`);
  const username = url.username === '' ? undefined : decodeURIComponent(url.username);
  const password = url.password === '' ? undefined : decodeURIComponent(url.password);
  if (sentinel !== undefined) {
    if (url.protocol === 'rediss:') throw new RangeError('Sentinel mode takes a redis:// URL (no TLS through Sentinel)');
    return {
      sentinel_master_name: sentinel.name,
      sentinel_addresses: sentinel.addresses.map(sentinelAddress),
      ...(username === undefined ? {} : { username }),
      ...(password === undefined ? {} : { password }),
      ...(db === 0 ? {} : { db }),
    };
  }
  return {
    address: `${url.hostname}:${url.port || '6379'}`,
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    ...(db === 0 ? {} : { db }),
    ...(url.protocol === 'rediss:' ? { use_tls: true } : {}),
  };
}

function sentinelAddress(a: Readonly<{ host: string; port: number }>): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

/** Tally's log levels (pino's) as egress names them. */
export function egressLogLevel(level: string): EgressLogLevel {
  switch (level) {
    case 'trace':
    case 'debug':
      return 'debug';
    case 'info':
      return 'info';
    case 'warn':
      return 'warn';
    default:
      return 'error';
  }
}

/** The cgroup files egress v1.8.6 reads for its core count (livekit/protocol utils/hwstats). */
export const EGRESS_CGROUP_FILES = {
  v1Usage: '/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage',
  v1Quota: '/sys/fs/cgroup/cpu/cpu.cfs_quota_us',
  v1Period: '/sys/fs/cgroup/cpu/cpu.cfs_period_us',
  v2Stat: '/sys/fs/cgroup/cpu.stat',
  v2Max: '/sys/fs/cgroup/cpu.max',
} as const;

/**
 * The cores egress will count on this host, as it counts them: the cgroup CPU quota (fractional)
 * when its cgroup files are there and set, else Go's runtime.NumCPU (`cpus`, the cores this
 * process may run on: os.availableParallelism()). `read` returns a file's text, undefined if absent.
 */
export function egressHostCpus(read: (path: string) => string | undefined, cpus: number): number {
  const quota = (q: number, period: number) => (Number.isFinite(q) && q > 0 && Number.isFinite(period) && period > 0 ? q / period : cpus);
  if (read(EGRESS_CGROUP_FILES.v1Usage) !== undefined) {
    const q = read(EGRESS_CGROUP_FILES.v1Quota);
    return q === undefined ? cpus : quota(Number(q.trim()), Number(read(EGRESS_CGROUP_FILES.v1Period)?.trim()));
  }
  if (read(EGRESS_CGROUP_FILES.v2Stat) !== undefined) {
    const [q, period] = (read(EGRESS_CGROUP_FILES.v2Max) ?? 'max').trim().split(' ');
    return q === 'max' ? cpus : quota(Number(q), Number(period));
  }
  return cpus;
}

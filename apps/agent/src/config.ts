import { hostname } from 'node:os';
import { join } from 'node:path';
import { LogLevel, RedisSentinelEnvSchema, redisTarget, type RedisTarget } from '@tally/config';
import { NodeId, NodeRole } from '@tally/contracts';
import { z } from 'zod';
import type { BudgetOverrides } from './budget.js';
import type { MediaDir } from './probe/filesystems.js';
import { objectStoreConfig, ObjectStoreEnvSchema, type StagingStoreConfig } from './staging/staging-config.js';
import { WorkerEnvSchema, workersConfig, type WorkersConfig } from './runtime/workers-config.js';

const positiveInt = z.coerce.number().int().positive();
const LABEL_KEY = /^[A-Za-z0-9][A-Za-z0-9_./-]*$/;

/** `k=v,k=v`; keys are label-safe, values free text without commas. */
const Labels = z.string().transform((text, ctx) => {
  const labels: Record<string, string> = {};
  for (const pair of text.split(',').map((p) => p.trim())) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq).trim();
    if (eq < 0 || !LABEL_KEY.test(key)) {
      ctx.addIssue({ code: 'custom', message: `"${pair}" is not key=value with a key of letters, digits and _ . / -` });
      return z.NEVER;
    }
    labels[key] = pair.slice(eq + 1).trim();
  }
  return labels;
});

/** Every variable the agent reads; apps/agent/README.md documents each one. */
export const AgentEnvSchema = z.object({
  REDIS_URL: z
    .string()
    .refine((v) => URL.canParse(v) && ['redis:', 'rediss:'].includes(new URL(v).protocol), 'must be a redis: or rediss: URL'),
  ...RedisSentinelEnvSchema.shape,
  TALLY_NODE_ID: NodeId.optional(),
  TALLY_NODE_ROLE: NodeRole.default('origin'),
  TALLY_HEARTBEAT_INTERVAL_S: positiveInt.default(5),
  TALLY_LOG_LEVEL: LogLevel.default('info'),
  TALLY_NODE_CPU_MILLICORES: positiveInt.optional(),
  TALLY_NODE_RAM_MB: positiveInt.optional(),
  TALLY_NODE_NIC_MBPS: positiveInt.optional(),
  TALLY_NODE_NVENC_SESSIONS: z.coerce.number().int().min(0).optional(),
  TALLY_NODE_NVENC_UNLIMITED_CAP: z.coerce.number().int().min(0).default(32),
  TALLY_NODE_LABELS: Labels.default({}),
  TALLY_HLS_DIR: z.string().min(1).optional(),
  TALLY_DISK_SHARED_NAME: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits and _ . - only')
    .optional(),
  ...WorkerEnvSchema.shape,
  ...ObjectStoreEnvSchema.shape,
});

export type AgentConfig = Readonly<{
  redisUrl: string;
  /** Where the agent's Redis clients connect: `redisUrl`, or the primary the Sentinels name. */
  redis: RedisTarget;
  nodeId: string;
  role: NodeRole;
  heartbeat: Readonly<{ intervalS: number; ttlS: number }>;
  logLevel: LogLevel;
  overrides: BudgetOverrides;
  labels: Readonly<Record<string, string>>;
  nvencUnlimitedCap: number;
  workers: WorkersConfig;
  /** The directories Tally writes media to on this node, measured in every heartbeat. */
  mediaDirs: readonly MediaDir[];
  /** Set when the recordings filesystem is shared by several nodes (one ledger counter for all). */
  diskSharedName: string | undefined;
  /** The origin's object store: what this node's egress wrote is staged there (docs/adr/0033). */
  objectStore: StagingStoreConfig | undefined;
}>;

export class AgentConfigError extends Error {}

/** A node stays listed through two missed beats and leaves on the third. */
export const TTL_BEATS = 3;

/** Parses the environment once; throws naming every invalid variable. */
export function loadAgentConfig(env: NodeJS.ProcessEnv = process.env, host: string = hostname()): AgentConfig {
  // An empty variable (as systemd EnvironmentFile= and compose write them) means unset.
  const set = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = AgentEnvSchema.safeParse(set);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new AgentConfigError(`invalid agent configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const redis = redisTarget(e.REDIS_URL, e);
  if ('error' in redis) throw new AgentConfigError(`invalid agent configuration:\n  ${redis.error.variable}: ${redis.error.message}`);
  const nodeId = e.TALLY_NODE_ID ?? NodeId.safeParse(host).data;
  if (nodeId === undefined)
    throw new AgentConfigError(`invalid agent configuration:\n  TALLY_NODE_ID: unset and the hostname "${host}" is not a valid node id`);
  const workers = workersOrThrow(e, redis);
  const objectStore = objectStoreConfig(e);
  if (objectStore instanceof Error) throw new AgentConfigError(`invalid agent configuration:\n  ${objectStore.message}`);
  return Object.freeze({
    redisUrl: e.REDIS_URL,
    redis,
    nodeId,
    role: e.TALLY_NODE_ROLE,
    heartbeat: Object.freeze({ intervalS: e.TALLY_HEARTBEAT_INTERVAL_S, ttlS: e.TALLY_HEARTBEAT_INTERVAL_S * TTL_BEATS }),
    logLevel: e.TALLY_LOG_LEVEL,
    overrides: Object.freeze({
      cpuMillicores: e.TALLY_NODE_CPU_MILLICORES,
      ramMb: e.TALLY_NODE_RAM_MB,
      nicMbps: e.TALLY_NODE_NIC_MBPS,
      nvencSessions: e.TALLY_NODE_NVENC_SESSIONS,
    }),
    labels: Object.freeze(e.TALLY_NODE_LABELS),
    nvencUnlimitedCap: e.TALLY_NODE_NVENC_UNLIMITED_CAP,
    workers,
    mediaDirs: Object.freeze([
      { role: 'recordings', dir: workers.recordingsDir },
      { role: 'hls', dir: e.TALLY_HLS_DIR ?? join(e.TALLY_HOME, 'hls') },
      // Ladders are written beside the recording they are made from.
      { role: 'ladders', dir: workers.recordingsDir },
      { role: 'scratch', dir: workers.dir },
    ] satisfies MediaDir[]),
    diskSharedName: e.TALLY_DISK_SHARED_NAME,
    objectStore,
  });
}

function workersOrThrow(e: z.infer<typeof AgentEnvSchema>, redis: RedisTarget): WorkersConfig {
  try {
    return workersConfig(e, redis.sentinel);
  } catch (error) {
    throw new AgentConfigError(`invalid agent configuration:\n  ${error instanceof Error ? error.message : String(error)}`);
  }
}

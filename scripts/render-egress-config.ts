/**
 * Prints the LiveKit egress config for this node as JSON (egress reads it as YAML): livekit-server's
 * credentials and Redis from tally.env, and egress's own admission derived from Tally's capacity
 * model and the budget this node's agent reports, so that egress admits what Tally admits.
 *
 * install.sh runs it (as root, after the agent started) with only tally.env as environment:
 *   env -i node --env-file=DIR/tally.env --import @swc-node/register/esm-register \
 *     scripts/render-egress-config.ts > DIR/egress.yaml
 *
 * Reads: REDIS_URL, LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET, TALLY_EGRESS_PORT (health),
 * TALLY_EGRESS_TEMPLATE_PORT, and optionally TALLY_LOG_LEVEL, TALLY_CAPACITY_PROFILE, TALLY_NODE_ID
 * (else the host name, as the agent does), TALLY_EGRESS_WAIT_S (for the agent's heartbeat, 30).
 * Exit status: 0 printed; 3 this node has no room for any egress mode; 1 anything else.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { loadCapacityModel } from '@tally/admission';
import { egressAdmission, egressHostCpus, egressLogLevel, EGRESS_MODES, renderEgressServiceConfig, type NodeBudget } from '@tally/capacity';
import { NodeId } from '@tally/contracts';
import { NodeRegistry, toNodeBudget } from '@tally/nodes';
import { Redis } from 'ioredis';
import { z } from 'zod';

const NO_ROOM_EXIT = 3;

const port = z.coerce.number().int().min(1).max(65_535);
const Env = z.object({
  REDIS_URL: z.string().url(),
  LIVEKIT_URL: z.string().url(),
  LIVEKIT_API_KEY: z.string().min(3),
  LIVEKIT_API_SECRET: z.string().min(32),
  TALLY_EGRESS_PORT: port,
  TALLY_EGRESS_TEMPLATE_PORT: port,
  TALLY_LOG_LEVEL: z.string().default('info'),
  TALLY_CAPACITY_PROFILE: z.string().min(1).optional(),
  TALLY_NODE_ID: NodeId.optional(),
  TALLY_EGRESS_WAIT_S: z.coerce.number().int().min(1).default(30),
});

function fail(message: string, code = 1): never {
  process.stderr.write(`render-egress-config: ${message}\n`);
  process.exit(code);
}

function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

const set = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined && v !== ''));
const parsed = Env.safeParse(set);
if (!parsed.success) fail(`invalid environment:\n  ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n  ')}`);
const env = parsed.data;
const nodeId = env.TALLY_NODE_ID ?? NodeId.safeParse(hostname()).data;
if (nodeId === undefined) fail(`TALLY_NODE_ID is unset and the host name "${hostname()}" is not a valid node id`);

// The budget admission uses is the one the agent heartbeats (measured, or its TALLY_NODE_* overrides).
const redis = new Redis(env.REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
redis.on('error', () => undefined);
let node: NodeBudget | undefined;
try {
  await redis.connect();
  const registry = new NodeRegistry(redis);
  const deadline = Date.now() + env.TALLY_EGRESS_WAIT_S * 1_000;
  let view = await registry.get(nodeId);
  while (view === undefined && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    view = await registry.get(nodeId);
  }
  if (view === undefined)
    fail(`no heartbeat from the agent of node ${nodeId} within ${env.TALLY_EGRESS_WAIT_S} s (is tally-agent running?)`);
  node = toNodeBudget(view);
} catch (error) {
  fail(`reading node ${nodeId} from Redis: ${error instanceof Error ? error.message : String(error)}`);
} finally {
  redis.disconnect();
}

if (node === undefined) fail(`node ${nodeId} has no budget`);
const model = loadCapacityModel(env.TALLY_CAPACITY_PROFILE);
const hostCpus = egressHostCpus(readIfPresent, availableParallelism());
const admission = egressAdmission(model, node, hostCpus);
const runnable = EGRESS_MODES.filter((mode) => admission.modes[mode].maxConcurrent > 0);
if (runnable.length === 0) {
  fail(`node ${nodeId} (${node.cpuMillicores} millicores, ${node.ramMb} MB) has no room for any egress mode`, NO_ROOM_EXIT);
}
const livekit = new URL(env.LIVEKIT_URL);
livekit.protocol = livekit.protocol === 'https:' ? 'wss:' : 'ws:';
const config = renderEgressServiceConfig({
  apiKey: env.LIVEKIT_API_KEY,
  apiSecret: env.LIVEKIT_API_SECRET,
  wsUrl: livekit.origin,
  redisUrl: env.REDIS_URL,
  healthPort: env.TALLY_EGRESS_PORT,
  templatePort: env.TALLY_EGRESS_TEMPLATE_PORT,
  logLevel: egressLogLevel(env.TALLY_LOG_LEVEL),
  model,
  node,
  hostCpus,
});
process.stdout.write(`${JSON.stringify(config, null, 2)}\n`);
const summary = EGRESS_MODES.map((m) => `${m} ${admission.modes[m].maxConcurrent}`).join(', ');
process.stderr.write(
  `render-egress-config: node ${nodeId}, ${hostCpus} cores: at most ${summary}${admission.exact ? '' : ' (mixed loads: egress may refuse before Tally)'}\n`,
);

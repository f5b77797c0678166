/**
 * `./install.sh --leave` on a joined node, with only its tally.env as environment:
 *   leave.ts drain   waits, with progress, until no reservation is held on the node (running
 *                    recordings finish); exits 2 when TALLY_LEAVE_TIMEOUT_S passes first.
 * The origin sets the node draining before (POST /v1/nodes/{id}/drain), and takes it out of the
 * pool after, deleting the node's Redis user (POST /v1/nodes/{id}/leave).
 */
import { CapacityLedger } from '@tally/admission';
import { NodeId } from '@tally/contracts';
import { createRedis, redisTarget, RedisSentinelEnvSchema } from '@tally/config';
import { z } from 'zod';

const Env = z.object({
  REDIS_URL: z.string().min(1),
  ...RedisSentinelEnvSchema.shape,
  TALLY_NODE_ID: NodeId,
  TALLY_LEAVE_TIMEOUT_S: z.coerce.number().int().min(0).default(600),
});

const POLL_MS = 1_000;
const PROGRESS_EVERY_MS = 5_000;

const env = Env.parse(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined && v !== '')));
const target = redisTarget(env.REDIS_URL, env);
if ('error' in target) throw new Error(`${target.error.variable}: ${target.error.message}`);
const redis = createRedis(target, { maxRetriesPerRequest: 2 });
const ledger = new CapacityLedger(redis);
const nodeId = env.TALLY_NODE_ID;

async function heldHere(): Promise<string[]> {
  return (await ledger.heldOn(nodeId)).map((r) => `${r.kind} ${r.id}`);
}

async function drain(): Promise<number> {
  const deadline = Date.now() + env.TALLY_LEAVE_TIMEOUT_S * 1_000;
  let lastProgress = 0;
  for (;;) {
    const held = await heldHere();
    if (held.length === 0) {
      console.log(`node ${nodeId}: nothing runs here anymore`);
      return 0;
    }
    if (Date.now() >= deadline) {
      console.error(`node ${nodeId}: still running after ${env.TALLY_LEAVE_TIMEOUT_S} s: ${held.join(', ')}`);
      return 2;
    }
    if (Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
      lastProgress = Date.now();
      console.log(`node ${nodeId}: waiting for ${held.length} to finish: ${held.join(', ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

const command = process.argv[2];
let code = 1;
try {
  if (command === 'drain') code = await drain();
  else console.error('usage: leave.ts drain');
} finally {
  redis.disconnect();
}
process.exitCode = code;

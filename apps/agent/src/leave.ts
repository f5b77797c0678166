/**
 * `./install.sh --leave` on a joined node, with only its tally.env as environment:
 *   leave.ts drain   sets the node draining (admission places nothing new on it) and waits, with
 *                    progress, until no reservation is held on it (running recordings finish);
 *                    exits 2 when TALLY_LEAVE_TIMEOUT_S passes first.
 * The node is then taken out of the pool by the origin (POST /v1/nodes/{id}/leave), which also
 * deletes the node's Redis user.
 */
import { CapacityLedger } from '@tally/admission';
import { NodeId } from '@tally/contracts';
import { NodeRegistry } from '@tally/nodes';
import { Redis } from 'ioredis';
import { z } from 'zod';

const Env = z.object({
  REDIS_URL: z.string().min(1),
  TALLY_NODE_ID: NodeId,
  TALLY_LEAVE_TIMEOUT_S: z.coerce.number().int().min(0).default(600),
});

const POLL_MS = 1_000;
const PROGRESS_EVERY_MS = 5_000;

const env = Env.parse(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined && v !== '')));
const redis = new Redis(env.REDIS_URL, { maxRetriesPerRequest: 2 });
const registry = new NodeRegistry(redis);
const ledger = new CapacityLedger(redis);
const nodeId = env.TALLY_NODE_ID;

async function heldHere(): Promise<string[]> {
  return (await ledger.heldOn(nodeId)).map((r) => `${r.kind} ${r.id}`);
}

async function drain(): Promise<number> {
  await registry.setStatus(nodeId, 'draining');
  console.log(`node ${nodeId}: draining (no new work is placed on it)`);
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

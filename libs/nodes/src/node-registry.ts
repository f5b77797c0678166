import { NodeHeartbeat, NodeStatus, NodeView } from '@tally/contracts';
import type { ChainableCommander, Redis } from 'ioredis';

/** Every key shares the `{nodes}` hash tag, so multi-key commands work on Redis Cluster too. */
export const NODE_KEYS = {
  index: 'tally:{nodes}:index',
  status: 'tally:{nodes}:status',
  heartbeat: (nodeId: string) => `tally:{nodes}:hb:${nodeId}`,
} as const;

/** Drops an index member only if its heartbeat is still gone, so a node beating meanwhile stays listed. */
const PRUNE_SCRIPT = `
if redis.call('EXISTS', KEYS[2]) == 0 then
  return redis.call('SREM', KEYS[1], ARGV[1])
end
return 0
`;

type RegistryCommands = { tallyPruneNode(index: string, heartbeat: string, nodeId: string): Promise<number> };

export type NodeRegistryOptions = Readonly<{
  /** Called for a stored heartbeat that fails the schema (an agent of another version); list() skips it. */
  onMalformed?: (nodeId: string, problem: string) => void;
}>;

/**
 * The node pool in Redis: a node is in the pool while its heartbeat key lives. Each agent
 * rewrites its key with a TTL; a node that stops beating leaves when the key expires.
 */
export class NodeRegistry {
  private readonly redis: Redis & RegistryCommands;

  constructor(
    redis: Redis,
    private readonly options: NodeRegistryOptions = {},
  ) {
    redis.defineCommand('tallyPruneNode', { numberOfKeys: 2, lua: PRUNE_SCRIPT });
    this.redis = redis as Redis & RegistryCommands;
  }

  async heartbeat(heartbeat: NodeHeartbeat, ttlS: number): Promise<void> {
    const hb = NodeHeartbeat.parse(heartbeat);
    await execAll(this.redis.multi().set(NODE_KEYS.heartbeat(hb.nodeId), JSON.stringify(hb), 'EX', ttlS).sadd(NODE_KEYS.index, hb.nodeId));
  }

  /** Live nodes sorted by id; index members whose heartbeat expired are removed from the index. */
  async list(): Promise<NodeView[]> {
    const ids = (await this.redis.smembers(NODE_KEYS.index)).sort();
    if (ids.length === 0) return [];
    const [values, statuses] = await Promise.all([this.redis.mget(ids.map(NODE_KEYS.heartbeat)), this.redis.hgetall(NODE_KEYS.status)]);
    const nodes: NodeView[] = [];
    for (const [i, nodeId] of ids.entries()) {
      const raw = values[i];
      if (raw === null || raw === undefined) {
        await this.redis.tallyPruneNode(NODE_KEYS.index, NODE_KEYS.heartbeat(nodeId), nodeId);
        continue;
      }
      const view = decode(nodeId, raw, statuses[nodeId]);
      if (view.ok) nodes.push(view.node);
      else this.options.onMalformed?.(nodeId, view.problem);
    }
    return nodes;
  }

  /** The node while its heartbeat lives; throws if what is stored fails the schema. */
  async get(nodeId: string): Promise<NodeView | undefined> {
    const [raw, status] = await Promise.all([this.redis.get(NODE_KEYS.heartbeat(nodeId)), this.redis.hget(NODE_KEYS.status, nodeId)]);
    if (raw === null) return undefined;
    const view = decode(nodeId, raw, status ?? undefined);
    if (!view.ok) throw new Error(`malformed heartbeat for node ${nodeId}: ${view.problem}`);
    return view.node;
  }

  /** Survives the heartbeat and restarts of the agent: a disabled node comes back disabled. */
  async setStatus(nodeId: string, status: NodeStatus): Promise<void> {
    const parsed = NodeStatus.parse(status);
    if (parsed === 'active') await this.redis.hdel(NODE_KEYS.status, nodeId);
    else await this.redis.hset(NODE_KEYS.status, nodeId, parsed);
  }

  /**
   * The node's own agent leaving (graceful shutdown): its heartbeat goes, so it is out of the pool
   * now; the next listing drops its index member. A node's Redis user may only add to the shared
   * index (docs/adr/0025), so this touches nothing but the node's own key.
   */
  async leave(nodeId: string): Promise<void> {
    await this.redis.del(NODE_KEYS.heartbeat(nodeId));
  }

  /** Takes the node out of the pool now (the origin removing it). Its operator status is kept. */
  async remove(nodeId: string): Promise<void> {
    await execAll(this.redis.multi().del(NODE_KEYS.heartbeat(nodeId)).srem(NODE_KEYS.index, nodeId));
  }
}

/** ioredis resolves a transaction with per-command errors instead of rejecting. */
async function execAll(transaction: ChainableCommander): Promise<void> {
  const results = await transaction.exec();
  const failed = results?.find(([error]) => error !== null);
  if (failed?.[0]) throw failed[0];
}

/**
 * A node's heartbeat, from its own key. Its node id must be the key's: a node's Redis user writes
 * only its own key (docs/adr/0025), and what it writes there must not speak for another node.
 */
function decode(nodeId: string, raw: string, status: string | undefined): { ok: true; node: NodeView } | { ok: false; problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    json = undefined;
  }
  const parsed = NodeView.safeParse({ ...(typeof json === 'object' ? json : {}), status: status ?? 'active' });
  if (!parsed.success) return { ok: false, problem: parsed.error.message };
  if (parsed.data.nodeId !== nodeId) return { ok: false, problem: `the heartbeat of ${nodeId} names node ${parsed.data.nodeId}` };
  return { ok: true, node: parsed.data };
}

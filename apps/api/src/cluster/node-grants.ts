import { createHash } from 'node:crypto';
import { nodeReportQueueOf, recordingNodeQueueOf, transcodeQueueOf, type JoinedNodeRole } from '@tally/contracts';

/**
 * The Redis hash livekit-server looks up API keys it was not configured with in (field: key, value:
 * secret), each answer cached for 3 s (scripts/provision/go/livekit-server/patches/redis-api-keys.patch).
 */
export const LIVEKIT_KEYS_HASH = 'tally:{lk}:keys';

/** The Redis ACL user of a joined node. */
export function nodeRedisUser(nodeId: string): string {
  return `tally-node-${nodeId}`;
}

/** Whether `user` is a joined node's user (what the API creates and deletes; never the origin's or the installer's users). */
export function isNodeRedisUser(user: string): boolean {
  return user.startsWith('tally-node-');
}

export function sha256Hex(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/**
 * Commands every node user may run: data commands on its keys, scripts (BullMQ, psrpc), pub/sub and
 * its own connection. Nothing administrative or dangerous (CONFIG, FLUSHALL, KEYS, DEBUG, ACL,
 * SHUTDOWN, CLIENT KILL, …), nothing that lists other keys or channels (SCAN, RANDOMKEY, PUBSUB),
 * nothing that replaces what other clients run (SCRIPT FLUSH, FUNCTION). INFO stays: BullMQ reads
 * the server's version and eviction policy from it.
 */
const COMMANDS = [
  '-@all',
  '+@read',
  '+@write',
  '+@keyspace',
  '+@scripting',
  '+@transaction',
  '+@pubsub',
  '+@connection',
  '-@admin',
  '-@dangerous',
  '-scan',
  '-randomkey',
  '-pubsub',
  '-select',
  '-move',
  '-copy',
  '-script|flush',
  '-script|kill',
  '-function',
  '-fcall',
  '-fcall_ro',
  '+info',
];

const bull = (queue: string) => `~bull:${queue}:*`;

/** What the node's agent touches: its own heartbeat, worker report, ladder, staging and report queues and wake channel. */
function agentGrants(nodeId: string): string[] {
  return [
    `~tally:{nodes}:hb:${nodeId}`,
    `~tally:{nodes}:workers:${nodeId}`,
    // Its membership in the pool's index: SADD on every beat, and nothing else on that shared key
    // (a selector), so it cannot take other nodes out of the pool (SREM, DEL). Leaving deletes its
    // heartbeat only; whoever lists the pool next drops the member.
    '(~tally:{nodes}:index +sadd)',
    '%R~tally:{nodes}:status',
    // `install.sh --leave` waits for the node's reservations to end.
    '%R~tally:{cap}:all',
    '%R~tally:{cap}:res:*',
    `%R~tally:{cap}:node:${nodeId}`,
    `%R~tally:{nodes}:demand:${nodeId}:*`,
    `%R~tally:{nodes}:work:${nodeId}:*`,
    bull(transcodeQueueOf(nodeId)),
    bull(recordingNodeQueueOf(nodeId)),
    // Its ladder reports, media-worker exits and staged recordings: its own queue only, so the origin's
    // worker knows which node reports from the queue's name. No shared queue (transcodes, maintenance).
    bull(nodeReportQueueOf(nodeId)),
    `&tally:{nodes}:wake:${nodeId}`,
  ];
}

/**
 * psrpc (LiveKit's RPC over Redis pub/sub) claims a queued request by SETNX on the base64 SHA-256
 * of its payload: 43 characters and one '=' pad. No Tally or BullMQ key has that shape.
 */
const PSRPC_CLAIMS = `~${'?'.repeat(43)}=`;

/** psrpc channels of a service: `CLI.<service>.…`, `SRV.<service>…` and the legacy `<service>|…`. */
const psrpcChannels = (service: string) => [`&CLI.${service}.*`, `&SRV.${service}*`, `&${service}|*`];

/** LiveKit egress and ingress on a worker or GPU node: psrpc only, for their own services and IOInfo. */
function mediaWorkerGrants(role: 'worker' | 'gpu'): string[] {
  const services = ['EgressInternal', 'EgressHandler', 'IOInfo', ...(role === 'worker' ? ['IngressInternal', 'IngressHandler'] : [])];
  return [PSRPC_CLAIMS, ...services.flatMap(psrpcChannels)];
}

/**
 * livekit-server in LiveKit's multi-node mode: the keys of its room, node, participant, egress and
 * ingress stores (pkg/service/redisstore.go, pkg/routing/redisrouter.go), and every psrpc channel,
 * since the SFU serves or calls every LiveKit service.
 */
const LIVEKIT_SERVER_KEYS = [
  'livekit_version',
  'nodes',
  'room_node_map',
  'rooms',
  'room_internal',
  'room_participants:*',
  'room_lock:*',
  'egress',
  'ended_egress',
  'egress:room:*',
  'ingress',
  '{ingress}_stream_key',
  '{ingress}_state:*',
  'room_{ingress}:*',
  'agent_dispatch:*',
  'agent_job:*',
];

/**
 * The API keys livekit-server was not configured with (joined worker and GPU nodes' own, looked up
 * by the redis-api-keys patch): HGET of one key at a time on that hash, nothing that lists it.
 */
const LIVEKIT_KEYS_LOOKUP = `(~${LIVEKIT_KEYS_HASH} +hget)`;

function livekitServerGrants(): string[] {
  return [...LIVEKIT_SERVER_KEYS.map((key) => `~${key}`), PSRPC_CLAIMS, '&*', LIVEKIT_KEYS_LOOKUP];
}

/**
 * A `control` node's API and worker do what the origin's do on Redis's full user: every key and
 * channel (admission, queues, BullMQ), ACL (they re-create and revoke node users), CLIENT KILL.
 * Only what neither process ever runs is taken away: wiping, stopping or re-pointing the server.
 * Its own user rather than `default`, so removing the node cuts it off (docs/adr/0043).
 */
const CONTROL_RULES = [
  '~*',
  '&*',
  '+@all',
  '-flushall',
  '-flushdb',
  '-swapdb',
  '-shutdown',
  '-debug',
  '-replicaof',
  '-slaveof',
  '-failover',
  '-monitor',
];

/** The ACL rules after `reset` for a joined node's user, by role. */
export function nodeAclRules(nodeId: string, role: JoinedNodeRole): string[] {
  if (role === 'control') return ['resetkeys', 'resetchannels', ...CONTROL_RULES];
  const processes = role === 'media' ? livekitServerGrants() : mediaWorkerGrants(role);
  return ['resetkeys', 'resetchannels', ...COMMANDS, ...agentGrants(nodeId), ...processes];
}

/** ACL SETUSER arguments: enabled, only this password (given as its SHA-256), the role's rules. */
export function nodeAclSetUser(nodeId: string, role: JoinedNodeRole, passwordSha256: string): string[] {
  return [nodeRedisUser(nodeId), 'reset', 'on', `#${passwordSha256}`, ...nodeAclRules(nodeId, role)];
}

/**
 * The Redis user of the origin's own agent, egress, ingress and livekit-server: a joined media
 * node's grants (the agent's keys, livekit-server's stores and channels). Its own name, so removing a node of the origin's name through
 * the API never touches it. The origin's API and worker keep the full user.
 */
export const ORIGIN_MEDIA_REDIS_USER = 'tally-origin-media';

export function originMediaAclRules(nodeId: string): string[] {
  // A media node's: livekit-server's every channel covers the psrpc channels of egress and ingress.
  return nodeAclRules(nodeId, 'media');
}

/** The redis.conf `user` line install.sh writes for it (the password given as its SHA-256). */
export function originMediaUserLine(nodeId: string, passwordSha256: string): string {
  return ['user', ORIGIN_MEDIA_REDIS_USER, 'reset', 'on', `#${passwordSha256}`, ...originMediaAclRules(nodeId)].join(' ');
}

import { z } from 'zod';
import { withoutControlCharacters } from './text.js';
import { NodeId } from './nodes.js';

/**
 * The roles a node can join an origin with (`./install.sh --join --role`). `control` runs a replica
 * of the API and the worker (docs/adr/0043-control-plane-replicas.md); the others run the agent and media.
 */
export const JoinedNodeRole = z.enum(['media', 'worker', 'gpu', 'control']);
export type JoinedNodeRole = z.infer<typeof JoinedNodeRole>;

export const CreateJoinTokenBody = z
  .strictObject({
    /** Seconds until the token expires unused. Default TALLY_JOIN_TOKEN_TTL_S. */
    ttlS: z
      .number()
      .int()
      .min(60)
      .max(7 * 86_400)
      .optional(),
    /** The role the token joins (default media); a join with another role is refused. */
    role: JoinedNodeRole.optional(),
    /** The name the token joins; a join with another name is refused. */
    name: NodeId,
    /**
     * The node also runs a replica of the origin's Redis and a Sentinel (`install.sh --join
     * --redis-replica`), and is handed the replication credentials for that; a join that asks for it
     * without such a token, or the reverse, is refused. Needs an origin with Sentinel
     * (`install.sh --redis-sentinel`, docs/adr/0040-redis-sentinel.md). Default false.
     */
    redisReplica: z.boolean().optional(),
  })
  .meta({ id: 'CreateJoinTokenBody' });
export type CreateJoinTokenBody = z.infer<typeof CreateJoinTokenBody>;

export const JoinTokenView = z
  .object({
    /** Shown once; stored only as a hash. Valid for one join. */
    token: z.string(),
    expiresAt: z.iso.datetime(),
    /** What to run on the new host (from the checkout). */
    command: z.string(),
  })
  .meta({ id: 'JoinToken' });
export type JoinTokenView = z.infer<typeof JoinTokenView>;

export const JoinNodeBody = z
  .strictObject({
    token: withoutControlCharacters(z.string().min(1).max(200)),
    name: NodeId,
    role: JoinedNodeRole,
    /** Asks for the replication settings (`--redis-replica`); the token must have been made for it. */
    redisReplica: z.boolean().optional(),
  })
  .meta({ id: 'JoinNodeBody' });
export type JoinNodeBody = z.infer<typeof JoinNodeBody>;

/**
 * The origin's object store, handed to worker and GPU nodes so their agent stages what its egress
 * wrote there (docs/adr/0033-nodes-stage-recordings-in-the-bucket.md).
 */
export const ObjectStoreSettings = z
  .object({
    /** Unset for AWS S3 itself. */
    endpoint: z.string().optional(),
    bucket: z.string(),
    region: z.string(),
    forcePathStyle: z.boolean(),
    /**
     * The node's own account `tally-node-<name>` on the bundled store (staging under `incoming/` only,
     * deleted when the node is removed: docs/adr/0045-object-store-key-per-node.md), else the origin's key.
     */
    accessKeyId: z.string(),
    secretAccessKey: z.string(),
  })
  .meta({ id: 'ObjectStoreSettings' });
export type ObjectStoreSettings = z.infer<typeof ObjectStoreSettings>;

/** The origin's Sentinels (docs/adr/0040-redis-sentinel.md): every process on the node finds the primary through them. */
export const RedisSentinelSettings = z
  .object({
    /** The group the Sentinels monitor the primary under (REDIS_SENTINEL_NAME). */
    name: z.string(),
    /** host:port of the origin's Sentinels (TALLY_CLUSTER_REDIS_SENTINELS), then of every other Sentinel they know of. */
    addresses: z.array(z.string()),
  })
  .meta({ id: 'RedisSentinelSettings' });
export type RedisSentinelSettings = z.infer<typeof RedisSentinelSettings>;

/**
 * What a node that runs a Redis replica and a Sentinel (`--redis-replica`) needs: the primary, the
 * replication user, the user Sentinels sign in with, and the servers' own users as `redis.conf`
 * lines (passwords as SHA-256; Redis does not replicate ACLs, and a replica promoted to primary must
 * let the origin's processes in).
 */
export const RedisReplicaSettings = z
  .object({
    /** host:port of the primary now. */
    primary: z.string(),
    /** Two Sentinels must agree that the primary is down. */
    quorum: z.number().int(),
    replicationUser: z.string(),
    replicationPassword: z.string(),
    sentinelUser: z.string(),
    sentinelPassword: z.string(),
    /** `user …` lines every server of the group has (not the joined nodes' users, which the API applies). */
    serverUsers: z.array(z.string()),
  })
  .meta({ id: 'RedisReplicaSettings' });
export type RedisReplicaSettings = z.infer<typeof RedisReplicaSettings>;
/**
 * The origin's TURN over TLS server (coturn beside Caddy, docs/adr/0042-turn-tls-beside-caddy.md),
 * handed to `media` nodes: their livekit-server names it to every participant it hosts
 * (`turns:host:port?transport=tcp`), with credentials it mints per participant from `secret`.
 */
export const TurnServerSettings = z
  .object({
    host: z.string(),
    port: z.number().int().min(1).max(65_535),
    secret: z.string(),
  })
  .meta({ id: 'TurnServerSettings' });
export type TurnServerSettings = z.infer<typeof TurnServerSettings>;

/**
 * What a `control` node's API and worker need beyond the other roles' settings: the origin's
 * PostgreSQL and the secrets the origin's API and worker hold (docs/adr/0043-control-plane-replicas.md).
 */
export const ControlPlaneSettings = z
  .object({
    /** The origin's PostgreSQL on its cluster address (`install.sh --control-node` admits this node's address). */
    databaseUrl: z.string(),
    /** TALLY_SECRETS_KEY (hex): webhook secrets and stream keys are sealed with it; the node's worker signs webhooks. */
    secretsKey: z.string().nullable(),
    /** The admin key, so the node's API answers the operator as the origin's does. */
    adminKey: z.string().nullable(),
    /** TALLY_METRICS_TOKEN, for /metrics behind a proxy. */
    metricsToken: z.string().nullable(),
    /** The origin's public URL: links and the dashboard name it, whichever replica answers. */
    publicUrl: z.string(),
    /** The origin's live HLS directory (the node's worker tidies it: a shared mount, like `recordingsDir`). */
    hlsDir: z.string(),
    /** TALLY_WEBHOOK_ALLOW_CIDRS: the node's worker delivers webhooks to the same private ranges as the origin's, no others. */
    webhookAllowCidrs: z.array(z.string()),
  })
  .meta({ id: 'ControlPlaneSettings' });
export type ControlPlaneSettings = z.infer<typeof ControlPlaneSettings>;

/** What a joining node needs to become part of the pool; secrets, so the installer writes them with mode 600. */
export const ClusterSettings = z
  .object({
    nodeId: NodeId,
    role: JoinedNodeRole,
    /**
     * The origin's Redis with this node's own ACL user (`tally-node-<name>`, granted only what the role's
     * processes touch, docs/adr/0025): the agent heartbeats into it, livekit-server and egress coordinate
     * through it. Its password is also the node's credential for `POST /v1/nodes/{nodeId}/leave`.
     */
    redisUrl: z.string(),
    /**
     * The LiveKit key the node's processes sign with: a `worker` or `gpu` node's own (`tally-node-<name>`,
     * revoked with the node), the cluster's for a `media` node, whose livekit-server verifies the API's
     * tokens and signs its webhooks (docs/adr/0025).
     */
    livekit: z.object({
      apiKey: z.string(),
      apiSecret: z.string(),
      /** The origin's livekit-server as clients reach it (egress on a worker node connects there). */
      wsUrl: z.string(),
      /** Where livekit-server on the node sends its webhooks: the origin's API. */
      webhookUrl: z.string(),
    }),
    /**
     * Where egress writes recordings on every node: the origin's recordings directory. A node without
     * that directory mounted keeps its own recordings directory at this path.
     */
    recordingsDir: z.string().optional(),
    /**
     * Where a `worker` or `gpu` node stages the recordings it makes: the origin's S3 bucket (the store
     * `install.sh --object-store` runs on the origin, or the one it was given), with the origin's key
     * scoped to that bucket (docs/adr/0032, docs/adr/0033). `null` when recordings stay on the
     * origin's disk, and for `media` nodes, which record nothing.
     */
    objectStore: ObjectStoreSettings.nullable(),
    /** The Sentinels, when the origin runs Redis with Sentinel; `null` otherwise (then `redisUrl`'s host is the server). */
    redisSentinel: RedisSentinelSettings.nullable(),
    /** For a join with `redisReplica`; `null` otherwise. */
    redisReplica: RedisReplicaSettings.nullable(),
    /**
     * For `media` nodes when the origin serves TURN over TLS (`install.sh --domain`): participants
     * a joined node hosts get the same relay as the origin's. `null` otherwise.
     */
    turn: TurnServerSettings.nullable(),
    /** For `control` nodes: the database and secrets their API and worker run with; `null` otherwise. */
    control: ControlPlaneSettings.nullable(),
  })
  .meta({ id: 'ClusterSettings' });
export type ClusterSettings = z.infer<typeof ClusterSettings>;

/** What still runs on a node its own `install.sh --leave` just set draining. */
export const NodeDrainView = z
  .object({
    /** `<kind> <reservation id>` of each reservation held on the node; the node leaves once none is. */
    running: z.array(z.string()),
  })
  .meta({ id: 'NodeDrain' });
export type NodeDrainView = z.infer<typeof NodeDrainView>;

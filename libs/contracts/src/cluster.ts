import { z } from 'zod';
import { withoutControlCharacters } from './text.js';
import { NodeId } from './nodes.js';

/** The roles a node can join an origin with (`./install.sh --join --role`). */
export const JoinedNodeRole = z.enum(['media', 'worker', 'gpu']);
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
    accessKeyId: z.string(),
    secretAccessKey: z.string(),
  })
  .meta({ id: 'ObjectStoreSettings' });
export type ObjectStoreSettings = z.infer<typeof ObjectStoreSettings>;

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
    /**
     * For `media` nodes when the origin serves TURN over TLS (`install.sh --domain`): participants
     * a joined node hosts get the same relay as the origin's. `null` otherwise.
     */
    turn: TurnServerSettings.nullable(),
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

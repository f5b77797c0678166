import { DISK_ROLES } from '@tally/capacity';
import { z } from 'zod';

/** Hostname-like, so it is safe inside a Redis key and a metric label. */
export const NodeId = z
  .string()
  .max(253)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits and _ . - only, starting with a letter or digit');
export type NodeId = z.infer<typeof NodeId>;

/**
 * `origin` runs the control plane (api, worker, Redis, PostgreSQL); the others joined one
 * (`./install.sh --join`): `media` runs livekit-server, `worker` egress/ingress, `gpu` egress with NVENC.
 */
export const NodeRole = z.enum(['origin', 'worker', 'media', 'gpu']);
export type NodeRole = z.infer<typeof NodeRole>;

/**
 * Set by an operator. `draining` and `disabled` both take no new work; `draining` also asks for
 * what runs there to finish or move so the node can be taken down.
 */
export const NodeStatus = z.enum(['active', 'draining', 'disabled']);
export type NodeStatus = z.infer<typeof NodeStatus>;

const count = z.number().int().min(0);

/** The node budget @tally/capacity takes (without its id, which is `nodeId`). */
export const NodeBudgetReport = z.object({
  cpuMillicores: count,
  ramMb: count,
  nicMbps: count,
  gpus: z.array(z.object({ name: z.string().optional(), nvencSessions: count })),
});
export type NodeBudgetReport = z.infer<typeof NodeBudgetReport>;

/** What Tally writes to a filesystem: recordings, live HLS, transcode ladders, the media workers' scratch space. */
export const DiskRole = z.enum(DISK_ROLES);
export type DiskRole = z.infer<typeof DiskRole>;

const bytes = z.number().int().min(0);

/**
 * One filesystem Tally writes media to, as the agent measured it (statfs). Several directories on
 * one filesystem are one entry listing their roles.
 */
export const NodeFilesystem = z
  .object({
    /**
     * Names the filesystem in the capacity ledger: `<nodeId>:<device>`, or `shared:<name>` when the
     * operator declares it mounted by several nodes (their reservations then share one counter).
     */
    key: z.string().min(1).max(300),
    /** The mount point holding the directories. */
    mount: z.string(),
    roles: z.array(DiskRole).min(1),
    dirs: z.array(z.string()),
    totalBytes: bytes,
    /** Free to unprivileged writers (statfs bavail). */
    freeBytes: bytes,
  })
  .meta({ id: 'NodeFilesystem' });
export type NodeFilesystem = z.infer<typeof NodeFilesystem>;

/** A filesystem with the thresholds and reservations admission applies to it. */
export const NodeDiskView = NodeFilesystem.extend({
  /** Below this free space writers are stopped and nothing new that writes here is admitted. */
  stopFreeBytes: bytes,
  /** Below this free space the operator is alerted (TallyNodeDiskLow). */
  alertFreeBytes: bytes,
  /** MB (2^20 bytes) writers may be promised: free space above the stop watermark. */
  admissibleMb: z.number(),
  /** MB running writers reserve here (write rate × horizon + room to finalise). */
  reservedMb: z.number(),
  /** MB a new writer may still reserve: admissibleMb − reservedMb. */
  freeMb: z.number(),
}).meta({ id: 'NodeDisk' });
export type NodeDiskView = z.infer<typeof NodeDiskView>;

/** Where encoders reach a node's ingress: the RTMP base URL (the stream key follows it) and the WHIP URL. */
export const NodeIngressUrls = z
  .object({ rtmpUrl: z.url({ protocol: /^rtmp$/ }), whipUrl: z.url({ protocol: /^https?$/ }) })
  .meta({ id: 'NodeIngressUrls' });

export const NodeHeartbeat = z
  .object({
    nodeId: NodeId,
    role: NodeRole,
    /** What Tally may use on this node: measured, then operator overrides applied. */
    budget: NodeBudgetReport,
    /** What the whole host uses right now, Tally or not. */
    used: z.object({ cpuMillicores: count, ramMb: count }),
    /** The filesystems Tally writes media to on this node (absent from agents that do not measure them). */
    filesystems: z.array(NodeFilesystem).optional(),
    /**
     * Where encoders push to this node's ingress: an ingress admitted here is handed these URLs
     * (absent where the node runs no ingress).
     */
    ingress: NodeIngressUrls.optional(),
    labels: z.record(z.string(), z.string()),
    /** The agent's version. */
    version: z.string(),
    startedAt: z.iso.datetime(),
    sentAt: z.iso.datetime(),
  })
  .meta({ id: 'NodeHeartbeat' });
export type NodeHeartbeat = z.infer<typeof NodeHeartbeat>;

export const NodeView = NodeHeartbeat.extend({ status: NodeStatus }).meta({ id: 'Node' });
export type NodeView = z.infer<typeof NodeView>;

export const NodeParams = z.object({ nodeId: NodeId });
export const UpdateNodeBody = z.strictObject({ status: NodeStatus }).meta({ id: 'UpdateNodeBody' });
export type UpdateNodeBody = z.infer<typeof UpdateNodeBody>;

export const NodeList = z
  .object({
    items: z.array(
      NodeView.extend({
        /** What admitted work holds on this node now, in the capacity model's units. */
        reserved: z.object({ ramMb: z.number(), cpuMillicores: z.number(), nicKbps: z.number() }),
        /** Each media filesystem with its watermarks and what admitted writers reserve on it. */
        disks: z.array(NodeDiskView),
      }),
    ),
  })
  .meta({ id: 'NodeList' });
export type NodeList = z.infer<typeof NodeList>;

import { WORKLOAD_KINDS } from '@tally/capacity';
import { z } from 'zod';
import { NodeDiskView } from './nodes.js';
import { ReservationView } from './reservations.js';

/** API field → the capacity model's quota class it limits. */
export const QUOTA_FIELDS = {
  maxStreams: 'streams',
  maxViewers: 'viewers',
  maxRecordings: 'recordings',
  maxRoomComposites: 'room_composites',
  maxIngresses: 'ingresses',
  maxTranscodes: 'transcodes',
  maxCameras: 'cameras',
  maxCameraViewers: 'camera_viewers',
} as const;
export type QuotaField = keyof typeof QUOTA_FIELDS;
export type QuotaClassName = (typeof QUOTA_FIELDS)[QuotaField];
export const QUOTA_FIELD_NAMES = Object.keys(QUOTA_FIELDS) as QuotaField[];

const limit = z.number().int().min(0).max(1_000_000);

/** Effective limits (caps): the operator's explicit ones, the rest sized on one node of the pool. Also the shape of guarantees. */
export const AppQuotas = z
  .object({
    maxStreams: limit,
    maxViewers: limit,
    maxRecordings: limit,
    maxRoomComposites: limit,
    maxIngresses: limit,
    maxTranscodes: limit,
    maxCameras: limit,
    maxCameraViewers: limit,
  })
  .meta({ id: 'AppQuotas' });
export type AppQuotas = z.infer<typeof AppQuotas>;

/** What PATCH accepts: a number sets the class explicitly; null returns a cap to its default, a guarantee to none. */
export const QuotaOverrides = z.strictObject(
  Object.fromEntries(QUOTA_FIELD_NAMES.map((f) => [f, limit.nullable().optional()])) as Record<
    QuotaField,
    z.ZodOptional<z.ZodNullable<typeof limit>>
  >,
);
export type QuotaOverrides = z.infer<typeof QuotaOverrides>;

/** The capacity model's workload kinds, as the API accepts them. */
export const WorkloadKind = z.enum(WORKLOAD_KINDS);
export type WorkloadKind = z.infer<typeof WorkloadKind>;

export const CapacityCheckBody = z
  .strictObject({ kind: WorkloadKind, count: z.number().int().min(1).max(10_000).default(1) })
  .meta({ id: 'CapacityCheckBody' });
export type CapacityCheckBody = z.infer<typeof CapacityCheckBody>;

export const CapacityCheckResult = z
  .union([
    // Which node would take it is the operator's business (GET /v1/nodes), not an app key's.
    z.object({ admitted: z.literal(true) }),
    z.object({
      admitted: z.literal(false),
      code: z.enum(['quota_exceeded', 'capacity_exhausted']),
      resource: z.string(),
      limit: z.number(),
      used: z.number(),
      requested: z.number(),
      /** For capacity refusals: when asking again may succeed, as the 429 Retry-After says. */
      retryAfterS: z.number().optional(),
    }),
  ])
  .meta({ id: 'CapacityCheckResult' });
export type CapacityCheckResult = z.infer<typeof CapacityCheckResult>;

export const AppUsageView = z
  .object({
    items: z.array(
      z.object({
        quota: z.enum(QUOTA_FIELD_NAMES as [QuotaField, ...QuotaField[]]),
        /** Units the app holds now. */
        used: z.number(),
        /** The cap: admission refuses past it (quota_exceeded). */
        limit: z.number(),
        /** The floor kept free for the app while unused (0: none). */
        guarantee: z.number(),
      }),
    ),
    /**
     * Bytes the app holds: its complete recordings (local or object storage) and their ladders. A
     * recording start is refused (429 quota_exceeded, resource app.storage) while usedMb ≥ limitMb.
     */
    storage: z.object({
      usedBytes: z.number().int(),
      usedMb: z.number(),
      /** null: no cap. */
      limitMb: z.number().int().nullable(),
      /** Ended recordings older than this are deleted by the sweep; null: kept. */
      recordingRetentionDays: z.number().int().nullable(),
      /** A recording is stopped after this; null: no limit. */
      maxRecordingDurationS: z.number().int().nullable(),
    }),
  })
  .meta({ id: 'AppUsage' });
export type AppUsageView = z.infer<typeof AppUsageView>;

const LoadView = z.object({ ramMb: z.number(), cpuMillicores: z.number(), nicKbps: z.number() });

export const CapacityView = z
  .object({
    nodes: z.array(
      z.object({
        nodeId: z.string(),
        /** What the node spends before any workload (system, livekit-server, redis, …). */
        baseLoad: LoadView,
        allocatable: LoadView,
        reserved: LoadView,
        free: LoadView,
        nvencFree: z.array(z.number()),
        /** The node's media filesystems, their watermarks and what writers reserve on each. */
        disks: z.array(NodeDiskView),
        /** How many more of each kind this node takes now. */
        fits: z.record(z.string(), z.number()),
      }),
    ),
    total: z.object({
      baseLoad: LoadView,
      allocatable: LoadView,
      reserved: LoadView,
      free: LoadView,
      fits: z.record(z.string(), z.number()),
    }),
    /** Guarantees partition the live pool: what they promise, what of that is unused, and what is left for everyone. */
    guarantees: z.object({
      /** Σ of every app's guarantee, per quota field. */
      guaranteed: AppQuotas,
      /** The live pool's allocatable, the sum guarantees must fit. */
      allocatable: LoadView,
      /** What all guarantees together keep free when nothing of them is used (their units at class cost, plus idle runtimes). */
      promised: LoadView,
      /** The part of the guarantees not in use now, kept free for their apps. */
      unused: LoadView,
      /** What work outside guarantees may still take: allocatable − reserved − unused. */
      free: LoadView,
    }),
    /** With `?detail=reservations`: what holds each node's reservations, draining and departed nodes included. */
    reservations: z.array(ReservationView).optional(),
  })
  .meta({ id: 'Capacity' });
export type CapacityView = z.infer<typeof CapacityView>;

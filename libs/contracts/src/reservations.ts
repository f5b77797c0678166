import { z } from 'zod';

/** What a reservation is held for: the row named by `resourceId` (a ladder's is its recording). */
export const RESERVATION_OWNERS = ['stream', 'recording', 'hls', 'ladder', 'ingress', 'camera', 'camera_viewer'] as const;

export const ReservationView = z
  .object({
    /** The reservation id (the owner's id; `<recordingId>.ladder` for a ladder). */
    id: z.string(),
    nodeId: z.string(),
    /** The workload kind it was admitted as (`stream`, `egress.track_composite`, …). */
    kind: z.string(),
    appId: z.string(),
    owner: z.enum(RESERVATION_OWNERS).nullable(),
    resourceId: z.string(),
    count: z.number().int(),
    /** When it was taken. */
    since: z.iso.datetime(),
    /** Confirmed by what it admitted (LiveKit said it started); an unconfirmed one lapses on its own. */
    confirmed: z.boolean(),
  })
  .meta({ id: 'Reservation' });
export type ReservationView = z.infer<typeof ReservationView>;

export const CapacityQuery = z.object({
  /** `reservations`: also list every reservation the ledger holds, node by node. */
  detail: z.enum(['reservations']).optional(),
});
export type CapacityQuery = z.infer<typeof CapacityQuery>;

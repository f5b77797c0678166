import { Injectable, Logger } from '@nestjs/common';
import { CapacityLedger, type HeldReservation, type ReservationOwnerType, reservationOwner } from '@tally/admission';
import { type OwnerState, ReservationOwnersRepository } from './reservation-owners.repository.js';

/**
 * An unconfirmed reservation younger than this may be a create in flight (admitted, its row not
 * written yet, or its row about to change): it is not judged. The longest such window is an ingress
 * or recording waiting for its node's worker to start (60 s).
 */
const PENDING_SETTLE_MS = 120_000;

/** Releases per owner type, counted as tally_reconciler_repairs_total{kind="reservations.<type>"}. */
export type ReservationAuditReport = Readonly<Partial<Record<ReservationOwnerType, number>>>;

/**
 * The ledger audited against the rows: a reservation whose owner is gone (no row, or its app is
 * gone) or finished (an ended stream, a complete or failed recording, a stopped HLS session, a
 * deleted ingress or camera, a ladder no longer queued or running) holds capacity nothing uses, and
 * is released. Reservations are listed before the rows are read, so a row written before its
 * reservation was confirmed is always seen.
 */
@Injectable()
export class ReservationAuditor {
  private readonly logger = new Logger(ReservationAuditor.name);

  constructor(
    private readonly ledger: CapacityLedger,
    private readonly owners: ReservationOwnersRepository,
  ) {}

  async run(now: Date): Promise<ReservationAuditReport> {
    const held = (await this.ledger.list()).filter((r) => r.confirmed || now.getTime() - r.createdAt > PENDING_SETTLE_MS);
    if (held.length === 0) return {};
    const liveApps = await this.owners.liveApps([...new Set(held.map((r) => r.appId))]);
    const byType = new Map<ReservationOwnerType, HeldReservation[]>();
    for (const r of held) {
      const owner = reservationOwner(r.id);
      if (owner) byType.set(owner.type, [...(byType.get(owner.type) ?? []), r]);
    }
    const report: Partial<Record<ReservationOwnerType, number>> = {};
    for (const [type, reservations] of byType) {
      const states = await this.owners.states(
        type,
        reservations.map((r) => reservationOwner(r.id)?.id ?? r.id),
      );
      for (const r of reservations) {
        const state: OwnerState = liveApps.has(r.appId) ? (states.get(reservationOwner(r.id)?.id ?? r.id) ?? 'missing') : 'missing';
        if (state !== 'running' && (await this.ledger.release(r.id))) report[type] = (report[type] ?? 0) + 1;
      }
    }
    if (Object.keys(report).length > 0) this.logger.log(`released reservations of gone or finished owners ${JSON.stringify(report)}`);
    return report;
  }
}

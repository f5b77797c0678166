import { Inject, Injectable, Logger } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { LivekitRoomClient } from '@tally/livekit';
import { CONNECTION_LAPSE_MS, type RollupReport, UsageCursors, UsageRollup } from '@tally/metering';
import { MeteringSyncRepository, type OpenParticipant } from './metering-sync.repository.js';
import { UsageExporter } from './usage-exporter.service.js';

/** Rows that ended this long before the last sweep are copied again: covers commits that lagged their timestamps. */
const RECOPY_MS = 3_600_000;
/**
 * A participant LiveKit no longer lists is closed only once it has not been seen for this long:
 * LiveKit keeps a webhook up to 30 s, so its own leave (exact) gets the chance to come first.
 */
export const LEAVE_GRACE_MS = 45_000;

export type MeteringSweepReport = Readonly<{
  copied: number;
  participantsClosed: number;
  ingressesClosed: number;
  storageClosed: number;
  connectionsClosed: number;
  rollup: RollupReport;
  exportedHours: number;
}>;

/** One metering sweep (docs/adr/0028-usage-metering.md); every step is a recomputation, safe to repeat. */
@Injectable()
export class MeteringSweep {
  private readonly logger = new Logger(MeteringSweep.name);

  constructor(
    private readonly repository: MeteringSyncRepository,
    private readonly cursors: UsageCursors,
    private readonly rollup: UsageRollup,
    private readonly livekit: LivekitRoomClient,
    private readonly exporter: UsageExporter,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async run(now: Date): Promise<MeteringSweepReport> {
    const last = await this.cursors.get('sync');
    const copied = await this.repository.copyFromRows(new Date((last?.getTime() ?? 0) - RECOPY_MS), now);
    await this.cursors.set('sync', now);
    const storageClosed = await this.repository.sweepStorage(now);
    const ingressesClosed = await this.repository.closeIngresses(now);
    const participantsClosed = await this.closeDeparted(now);
    const connectionsClosed = await this.repository.closeLapsedConnections(now, CONNECTION_LAPSE_MS);
    const rollup = await this.rollup.run(now, this.config.metering.retentionMonths);
    const exportedHours = await this.exporter.run(now);
    if (participantsClosed + ingressesClosed + storageClosed + connectionsClosed > 0) {
      this.logger.log(
        `closed ${participantsClosed} participant, ${ingressesClosed} ingress, ${storageClosed} storage and ` +
          `${connectionsClosed} camera intervals whose end was lost`,
      );
    }
    return { copied, participantsClosed, ingressesClosed, storageClosed, connectionsClosed, rollup, exportedHours };
  }

  private async closeDeparted(now: Date): Promise<number> {
    const byRoom = new Map<string, OpenParticipant[]>();
    for (const p of await this.repository.openParticipants()) byRoom.set(p.room, [...(byRoom.get(p.room) ?? []), p]);
    const seen: string[] = [];
    const gone: string[] = [];
    for (const [room, open] of byRoom) {
      const present = new Set((await this.livekit.listParticipants(room)).map((p) => p.sid));
      for (const p of open) {
        if (present.has(p.sid)) seen.push(p.id);
        else if ((p.lastSeenAt ?? p.startedAt ?? now).getTime() < now.getTime() - LEAVE_GRACE_MS) gone.push(p.id);
      }
    }
    await this.repository.seen(seen, now);
    return this.repository.close(gone, now);
  }
}

import { Injectable, Logger } from '@nestjs/common';
import type { LivekitEvent } from '@tally/livekit';
import { eventTime, UsageIntervals } from '@tally/metering';
import { MeteringRepository } from './metering.repository.js';

const LEAVES: ReadonlySet<string> = new Set(['participant_left', 'participant_connection_aborted']);

/**
 * Turns LiveKit's participant and ingress events into usage intervals (docs/adr/0028-usage-metering.md).
 * Every write is idempotent, so it runs for redelivered events too.
 */
@Injectable()
export class MeteringEvents {
  private readonly logger = new Logger(MeteringEvents.name);

  constructor(
    private readonly intervals: UsageIntervals,
    private readonly repository: MeteringRepository,
  ) {}

  async apply(event: LivekitEvent, receivedAt: Date): Promise<void> {
    const participant = event.participant;
    if (participant && event.room && (event.event === 'participant_joined' || LEAVES.has(event.event))) {
      // Egress and ingress are metered as recordings and ingresses, not as people in the room.
      if (participant.kind === 'egress' || participant.kind === 'ingress') return;
      const appId = await this.repository.appOfRoom(event.room);
      if (!appId) return;
      const leftAt = LEAVES.has(event.event) ? eventTime(event.createdAt, receivedAt) : undefined;
      await this.intervals.participant(
        {
          appId,
          sid: participant.sid,
          room: event.room,
          role: participant.canPublish ? 'publisher' : 'subscriber',
          joinedAt: participant.joinedAt ?? (leftAt ? undefined : eventTime(event.createdAt, receivedAt)),
          leftAt,
        },
        receivedAt,
      );
      return;
    }
    const ingress = event.ingress;
    if (ingress?.startedAt && (event.event === 'ingress_started' || event.event === 'ingress_ended')) {
      const row = await this.repository.ingress(ingress.ingressId);
      if (!row) return;
      const endedAt = event.event === 'ingress_ended' ? (ingress.endedAt ?? eventTime(event.createdAt, receivedAt)) : undefined;
      await this.intervals.ingress(
        { appId: row.appId, livekitIngressId: ingress.ingressId, transcoded: row.transcode, startedAt: ingress.startedAt, endedAt },
        receivedAt,
      );
      this.logger.debug(`${event.event} metered for ingress ${ingress.ingressId}`);
    }
  }
}

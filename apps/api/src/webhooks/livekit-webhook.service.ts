import { Injectable, Logger } from '@nestjs/common';
import { type EgressSummary, type IngressSummary, InvalidWebhookError, type LivekitEvent, LivekitWebhookVerifier } from '@tally/livekit';
import { PassthroughEgresses, RecordingLifecycle } from '@tally/recordings';
import { IngressLifecycle } from '@tally/streams';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/domain-error.js';
import { HlsRepository } from '../hls/hls.repository.js';
import { StreamPresenceService } from '../streams/stream-presence.service.js';
import { LivekitEventsRepository } from './livekit-events.repository.js';
import { MeteringEvents } from '../metering/metering-events.js';

/** The room events that change a stream; the others are not stored either. */
const ROOM_EVENTS: ReadonlySet<string> = new Set([
  'participant_joined',
  'track_published',
  'track_unpublished',
  'participant_left',
  'participant_connection_aborted',
  'room_finished',
]);

function applies(event: LivekitEvent): boolean {
  return event.egress !== undefined || event.ingress !== undefined || (event.room !== undefined && ROOM_EVENTS.has(event.event));
}

@Injectable()
export class LivekitWebhookService {
  private readonly logger = new Logger(LivekitWebhookService.name);

  constructor(
    private readonly verifier: LivekitWebhookVerifier,
    private readonly events: LivekitEventsRepository,
    private readonly presence: StreamPresenceService,
    private readonly recordings: RecordingLifecycle,
    private readonly passthrough: PassthroughEgresses,
    private readonly ingresses: IngressLifecycle,
    private readonly hls: HlsRepository,
    private readonly metering: MeteringEvents,
    private readonly clock: Clock,
  ) {}

  /** Unsigned or tampered bodies are refused with 401 before anything is read from them. */
  async receive(rawBody: string, authorization: string | undefined): Promise<void> {
    let event: LivekitEvent;
    try {
      event = await this.verifier.verify(rawBody, authorization);
    } catch (error) {
      if (error instanceof InvalidWebhookError) throw new DomainError('unauthorized', `invalid LiveKit webhook: ${error.message}`);
      throw error;
    }
    // Events nothing applies (room_started for every stream created, say) cost no database round trip.
    if (!applies(event)) {
      this.logger.debug(`ignored ${event.event}${event.room ? ` for ${event.room}` : ''}`);
      return;
    }
    // Usage intervals are idempotent on their own ids, so a redelivered event writes them again harmlessly.
    await this.metering.apply(event, this.clock.now());
    if (await this.events.seen(event.id)) return;
    await this.apply(event);
    await this.events.record(event);
  }

  private async apply(event: LivekitEvent): Promise<void> {
    if (event.egress) {
      const recording = await this.recordings.applyEgress(event.egress, this.clock.now());
      if (!recording) await this.notRecording(event.event, event.egress);
      await this.passthrough.stopSurvivor(recording, this.clock.now());
      return;
    }
    if (event.ingress) {
      await this.applyIngress(event.event, event.ingress);
      return;
    }
    if (!event.room) return;
    switch (event.event) {
      case 'participant_joined':
      case 'track_published':
      case 'track_unpublished':
        await this.presence.refresh(event.room);
        return;
      case 'participant_left':
      case 'participant_connection_aborted':
        await this.presence.refresh(event.room, { identity: event.participantIdentity, sid: event.participant?.sid });
        return;
      case 'room_finished':
        await this.presence.roomFinished(event.room);
        return;
    }
  }

  /**
   * Live HLS runs egresses too; their sessions follow them by polling (the worker's HLS sweep and
   * reconciler), so their events need nothing. Only an egress nothing in Tally started is worth a warning.
   */
  private async notRecording(name: string, egress: EgressSummary): Promise<void> {
    const session = await this.hls.ofEgressPath(egress.requestedPath);
    if (session) this.logger.debug(`${name} for egress ${egress.egressId} of HLS session ${session.id}`);
    else this.logger.warn(`${name} for egress ${egress.egressId}, which no recording or HLS session started`);
  }

  private async applyIngress(name: string, ingress: IngressSummary): Promise<void> {
    switch (name) {
      case 'ingress_started':
        if (!(await this.ingresses.started(ingress)))
          this.logger.warn(`${name} for ingress ${ingress.ingressId}, which Tally did not create`);
        return;
      case 'ingress_ended':
        if (!(await this.ingresses.ended(ingress)))
          this.logger.warn(`${name} for ingress ${ingress.ingressId}, which Tally did not create`);
        return;
      default:
        this.logger.debug(`ignored ${name} for ingress ${ingress.ingressId}`);
    }
  }
}

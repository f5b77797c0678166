import { WebhookReceiver } from 'livekit-server-sdk';
import { summarise } from './egress.client.js';
import { summariseIngress } from './ingress.client.js';
import { ParticipantInfo_Kind, type ParticipantInfo } from '@livekit/protocol';
import type { EventParticipant, LivekitCredentials, LivekitEvent } from './livekit.types.js';

export class InvalidWebhookError extends Error {}

/** Checks LiveKit's signature (a JWT over the body's sha256) and extracts the event. */
export class LivekitWebhookVerifier {
  private readonly receiver: WebhookReceiver;

  constructor(credentials: Pick<LivekitCredentials, 'apiKey' | 'apiSecret'>) {
    this.receiver = new WebhookReceiver(credentials.apiKey, credentials.apiSecret);
  }

  async verify(rawBody: string, authorization: string | undefined): Promise<LivekitEvent> {
    if (!authorization) throw new InvalidWebhookError('missing Authorization header');
    let event;
    try {
      event = await this.receiver.receive(rawBody, authorization);
    } catch (error) {
      throw new InvalidWebhookError(error instanceof Error ? error.message : 'invalid webhook');
    }
    if (!event.id || !event.event) throw new InvalidWebhookError('event without id or type');
    return {
      id: event.id,
      event: event.event,
      room: event.room?.name || event.egressInfo?.roomName || undefined,
      participantIdentity: event.participant?.identity || undefined,
      egress: event.egressInfo ? summarise(event.egressInfo) : undefined,
      ingress: event.ingressInfo ? summariseIngress(event.ingressInfo) : undefined,
      participant: event.participant?.sid ? eventParticipant(event.participant) : undefined,
      createdAt: new Date(Number(event.createdAt) * 1000),
    };
  }
}

function eventParticipant(p: ParticipantInfo): EventParticipant {
  const joinedMs = p.joinedAtMs > 0n ? Number(p.joinedAtMs) : p.joinedAt > 0n ? Number(p.joinedAt) * 1000 : undefined;
  return {
    sid: p.sid,
    identity: p.identity,
    kind:
      p.kind === ParticipantInfo_Kind.STANDARD
        ? 'standard'
        : p.kind === ParticipantInfo_Kind.EGRESS
          ? 'egress'
          : p.kind === ParticipantInfo_Kind.INGRESS
            ? 'ingress'
            : 'other',
    canPublish: p.permission?.canPublish ?? true,
    joinedAt: joinedMs === undefined ? undefined : new Date(joinedMs),
  };
}

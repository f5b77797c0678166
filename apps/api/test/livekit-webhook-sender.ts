import { createHash } from 'node:crypto';
import { ParticipantInfo, ParticipantInfo_Kind, ParticipantPermission, Room, WebhookEvent } from '@livekit/protocol';
import { AccessToken } from 'livekit-server-sdk';

export type ParticipantEvent = Readonly<{
  id: string;
  event: 'participant_joined' | 'participant_left' | 'participant_connection_aborted';
  room: string;
  sid: string;
  identity: string;
  canPublish: boolean;
  joinedAt: Date;
  /** LiveKit stamps events in whole seconds. */
  createdAt: Date;
}>;

/** Posts a participant event to the API exactly as livekit-server would: the body, signed with its key. */
export async function sendParticipantEvent(
  apiUrl: string,
  credentials: Readonly<{ apiKey: string; apiSecret: string }>,
  e: ParticipantEvent,
): Promise<number> {
  const body = new WebhookEvent({
    id: e.id,
    event: e.event,
    room: new Room({ name: e.room }),
    participant: new ParticipantInfo({
      sid: e.sid,
      identity: e.identity,
      kind: ParticipantInfo_Kind.STANDARD,
      permission: new ParticipantPermission({ canPublish: e.canPublish, canSubscribe: true }),
      joinedAt: BigInt(Math.floor(e.joinedAt.getTime() / 1000)),
      joinedAtMs: BigInt(e.joinedAt.getTime()),
    }),
    createdAt: BigInt(Math.floor(e.createdAt.getTime() / 1000)),
  }).toJsonString();
  const token = new AccessToken(credentials.apiKey, credentials.apiSecret);
  token.sha256 = createHash('sha256').update(body).digest('base64');
  const response = await fetch(`${apiUrl}/webhooks/livekit`, {
    method: 'POST',
    headers: { 'content-type': 'application/webhook+json', authorization: await token.toJwt() },
    body,
  });
  return response.status;
}

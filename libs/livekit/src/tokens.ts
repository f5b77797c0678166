import { AccessToken } from 'livekit-server-sdk';
import type { JoinGrant, LivekitCredentials } from './livekit.types.js';

/** A JWT that lets its holder join exactly one room, publishing only when granted. */
export async function mintJoinToken(credentials: LivekitCredentials, grant: JoinGrant): Promise<string> {
  const token = new AccessToken(credentials.apiKey, credentials.apiSecret, {
    identity: grant.identity,
    ttl: grant.ttlSeconds,
    ...(grant.name === undefined ? {} : { name: grant.name }),
  });
  token.addGrant({
    room: grant.room,
    roomJoin: true,
    roomCreate: false,
    roomAdmin: false,
    roomList: false,
    canSubscribe: true,
    canPublish: grant.canPublish,
    canPublishData: grant.canPublish,
    canUpdateOwnMetadata: false,
  });
  return token.toJwt();
}

import { ParticipantInfo_Kind } from '@livekit/protocol';
import { RoomServiceClient, type SIPGrant, TrackType, TwirpError, type VideoGrant } from 'livekit-server-sdk';
import type { LivekitCredentials, ParticipantSummary, RoomSummary } from './livekit.types.js';

/** How long a call token is reused: half the lifetime the SDK gives it (10 minutes; room.client.spec.ts checks). */
export const CALL_TOKEN_REUSE_MS = 5 * 60 * 1000;

/**
 * The SDK's RoomService client signs a fresh JWT (jose, a key import and an HMAC) for every call.
 * The grants that name no room (create, delete, list: the ones on every stream's path) are the
 * same for every call, so their token is signed once and reused while it has at least half its
 * lifetime left; grants for one room are signed per call as before.
 */
export class RoomServiceWithReusedTokens extends RoomServiceClient {
  private readonly headers = new Map<string, Readonly<{ header: Promise<Record<string, string>>; until: number }>>();

  constructor(credentials: LivekitCredentials) {
    super(credentials.url, credentials.apiKey, credentials.apiSecret);
  }

  override authHeader(grant: VideoGrant, sip?: SIPGrant): Promise<Record<string, string>> {
    if (sip !== undefined || grant.room !== undefined) return super.authHeader(grant, sip);
    const key = JSON.stringify(grant);
    const now = Date.now();
    const cached = this.headers.get(key);
    if (cached !== undefined && cached.until > now) return cached.header;
    const header = super.authHeader(grant);
    this.headers.set(key, { header, until: now + CALL_TOKEN_REUSE_MS });
    header.catch(() => this.headers.delete(key));
    return header;
  }
}

/** The adapter in front of LiveKit's RoomService. */
export class LivekitRoomClient {
  private readonly client: RoomServiceClient;

  constructor(credentials: LivekitCredentials) {
    this.client = new RoomServiceWithReusedTokens(credentials);
  }

  async createRoom(name: string, options: { emptyTimeoutS: number; departureTimeoutS: number }): Promise<void> {
    await this.client.createRoom({
      name,
      emptyTimeout: options.emptyTimeoutS,
      departureTimeout: options.departureTimeoutS,
    });
  }

  /** Removes the room and disconnects everyone in it; a room already gone is fine. */
  async deleteRoom(name: string): Promise<void> {
    try {
      await this.client.deleteRoom(name);
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
  }

  /** Disconnects one participant; one already gone (or a room already closed) is fine. */
  async removeParticipant(room: string, identity: string): Promise<void> {
    try {
      await this.client.removeParticipant(room, identity);
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
  }

  async listRooms(names?: string[]): Promise<RoomSummary[]> {
    const rooms = await this.client.listRooms(names);
    return rooms.map((r) => ({ name: r.name, participants: r.numParticipants, publishers: r.numPublishers }));
  }

  /** The participants LiveKit has in a room now, without its egress recorders; an unknown room has none. */
  async listParticipants(room: string): Promise<ParticipantSummary[]> {
    try {
      const participants = await this.client.listParticipants(room);
      // LiveKit's egress joins the room it records; it records the stream, it is not somebody in it.
      return participants
        .filter((p) => p.kind !== ParticipantInfo_Kind.EGRESS)
        .map((p) => ({
          identity: p.identity,
          sid: p.sid,
          publishedTracks: p.tracks.length,
          tracks: p.tracks.flatMap((t) => {
            const kind = t.type === TrackType.AUDIO ? 'audio' : t.type === TrackType.VIDEO ? 'video' : undefined;
            return kind ? [{ sid: t.sid, kind, mimeType: t.mimeType } as const] : [];
          }),
        }));
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof TwirpError && (error.status === 404 || error.code === 'not_found');
}

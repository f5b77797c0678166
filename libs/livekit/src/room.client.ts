import { ParticipantInfo_Kind } from '@livekit/protocol';
import { RoomServiceClient, TrackType, TwirpError } from 'livekit-server-sdk';
import type { LivekitCredentials, ParticipantSummary, RoomSummary } from './livekit.types.js';

/** The adapter in front of LiveKit's RoomService. */
export class LivekitRoomClient {
  private readonly client: RoomServiceClient;

  constructor(credentials: LivekitCredentials) {
    this.client = new RoomServiceClient(credentials.url, credentials.apiKey, credentials.apiSecret);
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

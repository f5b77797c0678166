import type { StreamView } from '@tally/contracts';
import type { Stream } from '@tally/db';

/** LiveKit room of a stream: derived from immutable ids only, never from free text. */
export function roomName(appId: string, streamId: string): string {
  return `${appId}.${streamId}`;
}

export function toStreamView(stream: Stream): StreamView {
  return {
    id: stream.id,
    appId: stream.appId,
    name: stream.name,
    room: stream.room,
    status: stream.status,
    publishers: stream.publishers,
    participants: stream.participants,
    createdAt: stream.createdAt.toISOString(),
    startedAt: stream.startedAt?.toISOString() ?? null,
    endedAt: stream.endedAt?.toISOString() ?? null,
    endReason: stream.endReason,
  };
}

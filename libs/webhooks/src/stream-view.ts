import type { StreamView } from '@tally/contracts';
import type { Stream } from '@tally/db';

/** A stream row as the API shows it; also the `data` of stream.live and stream.ended, whoever emits them. */
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
    // Set just before an open stream ends (the reason it is about to end with): shown once it has.
    endReason: stream.status === 'ended' ? stream.endReason : null,
  };
}

import { type ReactNode, useState } from 'react';
import type { StreamView } from '../api/types.js';
import { isNotFound } from '../api/errors.js';
import { ErrorMessage, Loading, StatusBadge } from '../components/feedback.js';
import { HlsPanel } from '../components/hls-panel.js';
import { WatchPlayer } from '../components/watch-player.js';
import { formatTime } from '../format.js';
import { usePoll } from '../use-poll.js';
import { appPath, type PageProps } from './page-props.js';

/** One stream, by id. Another app's stream id answers 404 like an unknown one, and says so. */
export function StreamPage({ api, appId, streamId, navigate }: PageProps & { streamId: string }): ReactNode {
  const stream = usePoll(`${appId}/streams/${streamId}`, (signal) =>
    api.get<StreamView>(appPath(appId, `/streams/${encodeURIComponent(streamId)}`), signal),
  );
  const [watching, setWatching] = useState(false);
  const [endError, setEndError] = useState<unknown>();

  const back = (
    <p>
      <button type="button" className="link" onClick={() => navigate({ page: 'streams', appId })}>
        ← All streams
      </button>
    </p>
  );
  if (isNotFound(stream.error)) {
    return (
      <section aria-labelledby="stream-heading">
        <h2 id="stream-heading">Stream {streamId}</h2>
        <p role="alert" className="message message-error">
          Stream {streamId} was not found in app {appId}. It does not exist, or it belongs to another app.
        </p>
        {back}
      </section>
    );
  }
  const s = stream.data;
  return (
    <section aria-labelledby="stream-heading">
      <h2 id="stream-heading">{s ? `Stream “${s.name}”` : `Stream ${streamId}`}</h2>
      {back}
      <ErrorMessage error={stream.error} action="Loading the stream" />
      {s === undefined ? (
        stream.error ? null : (
          <Loading what="the stream" />
        )
      ) : (
        <>
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={s.status} />
            </dd>
            <dt>Id</dt>
            <dd className="id">{s.id}</dd>
            <dt>LiveKit room</dt>
            <dd className="id">{s.room}</dd>
            <dt>Publishers</dt>
            <dd>{s.publishers}</dd>
            <dt>Participants</dt>
            <dd>{s.participants}</dd>
            <dt>Created</dt>
            <dd>{formatTime(s.createdAt)}</dd>
            <dt>Started</dt>
            <dd>{formatTime(s.startedAt)}</dd>
            <dt>Ended</dt>
            <dd>{s.endedAt ? `${formatTime(s.endedAt)} (${s.endReason?.replace(/_/g, ' ') ?? 'ended'})` : '—'}</dd>
          </dl>
          <div className="row">
            {s.status === 'live' && !watching ? (
              <button type="button" onClick={() => setWatching(true)}>
                Watch
              </button>
            ) : null}
            {s.status !== 'ended' ? (
              <button
                type="button"
                className="danger"
                onClick={() => {
                  setEndError(undefined);
                  api.delete(appPath(appId, `/streams/${s.id}`)).then(() => stream.reload(), setEndError);
                }}
              >
                End stream
              </button>
            ) : null}
          </div>
          <ErrorMessage error={endError} action="Ending the stream" />
          {watching ? <WatchPlayer api={api} stream={s} onClose={() => setWatching(false)} /> : null}
          <HlsPanel api={api} stream={s} />
        </>
      )}
    </section>
  );
}

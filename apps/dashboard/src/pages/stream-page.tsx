import type { StreamView } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { isNotFound } from '../api/errors.js';
import { useAction, useApi, useApiQuery } from '../api/queries.js';
import { StatusBadge } from '../components/feedback.js';
import { ActionFeedback, ConfirmButton } from '../components/form.js';
import { HlsPanel } from '../components/hls-panel.js';
import { Loaded } from '../components/loaded.js';
import { WatchPlayer } from '../components/watch-player.js';
import { formatTime } from '../format.js';
import { useNavigate } from '../navigation.js';
import { appPath, type PageProps } from './page-props.js';

/** One stream, by id. Another app's stream id answers 404 like an unknown one, and says so. */
export function StreamPage({ appId, streamId }: PageProps & { streamId: string }): ReactNode {
  const api = useApi();
  const navigate = useNavigate();
  const stream = useApiQuery<StreamView>(appPath(appId, `/streams/${encodeURIComponent(streamId)}`));
  const [watching, setWatching] = useState(false);
  const action = useAction();

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
  return (
    <section aria-labelledby="stream-heading">
      <h2 id="stream-heading">{stream.data ? `Stream “${stream.data.name}”` : `Stream ${streamId}`}</h2>
      {back}
      <Loaded query={stream} what="the stream">
        {(s) => (
          <>
            <StreamFacts stream={s} />
            <div className="row">
              {s.status === 'live' && !watching ? (
                <button type="button" onClick={() => setWatching(true)}>
                  Watch
                </button>
              ) : null}
              {s.status !== 'ended' ? (
                <ConfirmButton
                  text="End stream"
                  label="End stream"
                  question={`End “${s.name}” for everyone?`}
                  onConfirm={() =>
                    void action.run('Ending the stream', () => api.delete(appPath(appId, `/streams/${s.id}`)).then(() => undefined))
                  }
                />
              ) : null}
            </div>
            <ActionFeedback action={action} />
            {watching ? <WatchPlayer api={api} stream={s} onClose={() => setWatching(false)} /> : null}
            <HlsPanel stream={s} />
          </>
        )}
      </Loaded>
    </section>
  );
}

function StreamFacts({ stream: s }: { stream: StreamView }): ReactNode {
  return (
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
  );
}

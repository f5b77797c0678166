import { type FormEvent, type ReactNode, useState } from 'react';
import type { StreamList, StreamStatus, StreamView } from '../api/types.js';
import { EmptyState, ErrorMessage, Loading, Notice, StatusBadge } from '../components/feedback.js';
import { WatchPlayer } from '../components/watch-player.js';
import { formatTime } from '../format.js';
import { routePath } from '../routes.js';
import { usePoll } from '../use-poll.js';
import { appPath, type PageProps } from './page-props.js';

type Filter = 'all' | StreamStatus;

export function StreamsPage(props: PageProps): ReactNode {
  const { api, appId, navigate } = props;
  const [filter, setFilter] = useState<Filter>('all');
  const [watching, setWatching] = useState<StreamView>();
  const [actionError, setActionError] = useState<{ error: unknown; action: string }>();
  const [notice, setNotice] = useState<string>();
  const query = filter === 'all' ? '' : `?status=${filter}`;
  const streams = usePoll(`${appId}/streams${query}`, (signal) => api.get<StreamList>(appPath(appId, `/streams${query}`), signal));

  const run = async (action: string, work: () => Promise<string>): Promise<void> => {
    setActionError(undefined);
    setNotice(undefined);
    try {
      setNotice(await work());
      streams.reload();
    } catch (error) {
      setActionError({ error, action });
    }
  };

  const end = (stream: StreamView): Promise<void> =>
    run('Ending the stream', async () => {
      await api.delete<StreamView>(appPath(appId, `/streams/${stream.id}`));
      if (watching?.id === stream.id) setWatching(undefined);
      return `Stream “${stream.name}” ended.`;
    });

  return (
    <section aria-labelledby="streams-heading">
      <h2 id="streams-heading">Streams</h2>
      <div className="toolbar">
        <CreateStreamForm
          onCreate={(name) =>
            run('Stream', async () => {
              const created = await api.post<StreamView>(appPath(appId, '/streams'), { name });
              return `Stream “${created.name}” created (${created.id}). It goes live when a publisher joins.`;
            })
          }
        />
        <OpenStreamForm onOpen={(streamId) => navigate({ page: 'stream', appId, streamId })} />
      </div>
      {actionError ? <ErrorMessage error={actionError.error} action={actionError.action} /> : null}
      {notice ? <Notice tone="success">{notice}</Notice> : null}
      <label className="inline">
        Show{' '}
        <select value={filter} onChange={(e) => setFilter(e.target.value as Filter)}>
          <option value="all">all streams</option>
          <option value="live">live</option>
          <option value="created">created (nobody joined yet)</option>
          <option value="ended">ended</option>
        </select>
      </label>
      <ErrorMessage error={streams.error} action="Loading streams" />
      {streams.data === undefined ? (
        streams.error ? null : (
          <Loading what="streams" />
        )
      ) : streams.data.items.length === 0 ? (
        <EmptyState title={filter === 'all' ? 'No streams yet.' : `No ${filter} streams.`}>
          Create one above; it turns live as soon as a publisher joins with a token from the API.
        </EmptyState>
      ) : (
        <StreamTable
          streams={streams.data.items}
          appId={appId}
          onWatch={setWatching}
          onEnd={(s) => void end(s)}
          onOpen={(s) => navigate({ page: 'stream', appId, streamId: s.id })}
        />
      )}
      {watching ? <WatchPlayer key={watching.id} api={api} stream={watching} onClose={() => setWatching(undefined)} /> : null}
    </section>
  );
}

function StreamTable(props: {
  streams: StreamView[];
  appId: string;
  onWatch: (s: StreamView) => void;
  onEnd: (s: StreamView) => void;
  onOpen: (s: StreamView) => void;
}): ReactNode {
  return (
    <table aria-label="Streams">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Status</th>
          <th scope="col">Publishers</th>
          <th scope="col">Participants</th>
          <th scope="col">Started</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {props.streams.map((s) => (
          <tr key={s.id} data-stream-id={s.id}>
            <th scope="row">
              <a
                href={routePath({ page: 'stream', appId: props.appId, streamId: s.id })}
                onClick={(e) => {
                  e.preventDefault();
                  props.onOpen(s);
                }}
              >
                {s.name}
              </a>
              <div className="id">{s.id}</div>
            </th>
            <td>
              <StatusBadge status={s.status} />
            </td>
            <td>{s.publishers}</td>
            <td>{s.participants}</td>
            <td>{s.status === 'created' ? 'not yet' : formatTime(s.startedAt)}</td>
            <td className="actions">
              {s.status === 'live' ? (
                <button type="button" onClick={() => props.onWatch(s)} aria-label={`Watch ${s.name}`}>
                  Watch
                </button>
              ) : null}
              {s.status !== 'ended' ? (
                <button type="button" className="danger" onClick={() => props.onEnd(s)} aria-label={`End ${s.name}`}>
                  End
                </button>
              ) : (
                <span className="muted-text">{s.endReason?.replace(/_/g, ' ') ?? 'ended'}</span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function CreateStreamForm({ onCreate }: { onCreate: (name: string) => Promise<void> }): ReactNode {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    await onCreate(name);
    setBusy(false);
    setName('');
  };
  return (
    <form className="inline-form" onSubmit={(e) => void submit(e)} aria-label="Create a stream">
      <label>
        Stream name <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} placeholder="launch" />
      </label>
      <button type="submit" disabled={busy}>
        Create stream
      </button>
    </form>
  );
}

function OpenStreamForm({ onOpen }: { onOpen: (streamId: string) => void }): ReactNode {
  const [id, setId] = useState('');
  return (
    <form
      className="inline-form"
      aria-label="Open a stream by id"
      onSubmit={(e) => {
        e.preventDefault();
        if (id.trim() !== '') onOpen(id.trim());
      }}
    >
      <label>
        Stream id <input value={id} onChange={(e) => setId(e.target.value)} placeholder="str_…" />
      </label>
      <button type="submit">Open</button>
    </form>
  );
}

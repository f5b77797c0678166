import type { StreamList, StreamStatus, StreamView } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { useAction, useApi, useApiQuery } from '../api/queries.js';
import { DataTable } from '../components/data-table.js';
import { EmptyState, StatusBadge } from '../components/feedback.js';
import { ActionFeedback, ConfirmButton, SelectField } from '../components/form.js';
import { LoadedList } from '../components/loaded.js';
import { WatchPlayer } from '../components/watch-player.js';
import { formatTime } from '../format.js';
import { RouteLink, useNavigate } from '../navigation.js';
import { appPath, type PageProps } from './page-props.js';
import { CreateStreamForm, OpenStreamForm } from './stream-forms.js';

type Filter = 'all' | StreamStatus;

const FILTERS = [
  { value: 'all', label: 'all streams' },
  { value: 'live', label: 'live' },
  { value: 'created', label: 'created (nobody joined yet)' },
  { value: 'ended', label: 'ended' },
] as const;

export function StreamsPage({ appId }: PageProps): ReactNode {
  const api = useApi();
  const navigate = useNavigate();
  const [filter, setFilter] = useState<Filter>('all');
  const [watching, setWatching] = useState<StreamView>();
  const action = useAction();
  const query = filter === 'all' ? '' : `?status=${filter}`;
  const streams = useApiQuery<StreamList>(appPath(appId, `/streams${query}`));

  const end = (stream: StreamView): Promise<void> =>
    action.run('Ending the stream', async () => {
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
            action.run('Stream', async () => {
              const created = await api.post<StreamView>(appPath(appId, '/streams'), { name });
              return `Stream “${created.name}” created (${created.id}). It goes live when a publisher joins.`;
            })
          }
        />
        <OpenStreamForm onOpen={(streamId) => navigate({ page: 'stream', appId, streamId })} />
      </div>
      <ActionFeedback action={action} />
      <SelectField className="inline" label="Show " value={filter} options={FILTERS} onChange={setFilter} />
      <LoadedList
        query={streams}
        what="streams"
        empty={
          <EmptyState title={filter === 'all' ? 'No streams yet.' : `No ${filter} streams.`}>
            Create one above; it turns live as soon as a publisher joins with a token from the API.
          </EmptyState>
        }
      >
        {(items) => (
          <DataTable
            label="Streams"
            rows={items}
            rowKey={(s) => s.id}
            rowAttributes={(s) => ({ 'data-stream-id': s.id })}
            columns={[
              {
                header: 'Name',
                cell: (s) => (
                  <>
                    <RouteLink to={{ page: 'stream', appId, streamId: s.id }}>{s.name}</RouteLink>
                    <div className="id">{s.id}</div>
                  </>
                ),
              },
              { header: 'Status', cell: (s) => <StatusBadge status={s.status} /> },
              { header: 'Publishers', cell: (s) => s.publishers },
              { header: 'Participants', cell: (s) => s.participants },
              { header: 'Started', cell: (s) => (s.status === 'created' ? 'not yet' : formatTime(s.startedAt)) },
            ]}
            actions={(s) => (
              <>
                {s.status === 'live' ? (
                  <button type="button" onClick={() => setWatching(s)} aria-label={`Watch ${s.name}`}>
                    Watch
                  </button>
                ) : null}
                {s.status !== 'ended' ? (
                  <ConfirmButton
                    text="End"
                    label={`End ${s.name}`}
                    question={`End “${s.name}” for everyone?`}
                    onConfirm={() => void end(s)}
                  />
                ) : (
                  <span className="muted-text">{s.endReason?.replace(/_/g, ' ') ?? 'ended'}</span>
                )}
              </>
            )}
          />
        )}
      </LoadedList>
      {watching ? <WatchPlayer key={watching.id} api={api} stream={watching} onClose={() => setWatching(undefined)} /> : null}
    </section>
  );
}

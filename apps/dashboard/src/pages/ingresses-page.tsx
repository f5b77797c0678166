import { type FormEvent, type ReactNode, useState } from 'react';
import { isRouteMissing } from '../api/errors.js';
import type { IngressList, IngressView, StreamList } from '../api/types.js';
import { EmptyState, ErrorMessage, Loading, Notice, StatusBadge } from '../components/feedback.js';
import { formatTime } from '../format.js';
import { usePoll } from '../use-poll.js';
import { appPath, type PageProps } from './page-props.js';

/** RTMP / WHIP ingest into a stream. The API may not have these routes yet: a 404 route says so. */
export function IngressesPage({ api, appId }: PageProps): ReactNode {
  const ingresses = usePoll(`${appId}/ingresses`, (signal) => api.get<IngressList>(appPath(appId, '/ingresses'), signal));
  const [actionError, setActionError] = useState<{ error: unknown; action: string }>();
  const [created, setCreated] = useState<IngressView>();
  const [notice, setNotice] = useState<string>();

  if (isRouteMissing(ingresses.error)) {
    return (
      <section aria-labelledby="ingresses-heading">
        <h2 id="ingresses-heading">Ingresses</h2>
        <EmptyState title="Ingresses are not available on this server.">
          This Tally API does not offer RTMP / WHIP ingest yet; publish with a LiveKit SDK and a publisher token instead.
        </EmptyState>
      </section>
    );
  }

  const remove = async (ingress: IngressView): Promise<void> => {
    setActionError(undefined);
    setNotice(undefined);
    try {
      await api.delete(appPath(appId, `/ingresses/${encodeURIComponent(ingress.id)}`));
      setNotice(`Ingress ${ingress.id} deleted.`);
      ingresses.reload();
    } catch (error) {
      setActionError({ error, action: 'Deleting the ingress' });
    }
  };

  return (
    <section aria-labelledby="ingresses-heading">
      <h2 id="ingresses-heading">Ingresses</h2>
      <CreateIngressForm
        api={api}
        appId={appId}
        onCreate={async (streamId, kind) => {
          setActionError(undefined);
          setNotice(undefined);
          try {
            setCreated(await api.post<IngressView>(appPath(appId, '/ingresses'), { streamId, kind }));
            ingresses.reload();
          } catch (error) {
            setActionError({ error, action: 'Ingress' });
          }
        }}
      />
      {actionError ? <ErrorMessage error={actionError.error} action={actionError.action} /> : null}
      {notice ? <Notice tone="success">{notice}</Notice> : null}
      {created ? (
        <div className="panel secret" role="status">
          <p>Ingress {created.id} created. Point the encoder at:</p>
          <dl className="facts">
            <dt>URL</dt>
            <dd className="id">{created.url ?? '—'}</dd>
            <dt>Stream key (shown once)</dt>
            <dd className="id">{created.streamKey ?? '—'}</dd>
          </dl>
        </div>
      ) : null}
      <ErrorMessage error={ingresses.error} action="Loading ingresses" />
      {ingresses.data === undefined ? (
        ingresses.error ? null : (
          <Loading what="ingresses" />
        )
      ) : ingresses.data.items.length === 0 ? (
        <EmptyState title="No ingresses yet.">Create one to push RTMP or WHIP into a stream.</EmptyState>
      ) : (
        <table aria-label="Ingresses">
          <thead>
            <tr>
              <th scope="col">Ingress</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">URL</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {ingresses.data.items.map((i) => (
              <tr key={i.id}>
                <th scope="row">
                  <span className="id">{i.id}</span>
                  {i.streamId ? <div className="muted-text">stream {i.streamId}</div> : null}
                </th>
                <td>{i.kind ?? '—'}</td>
                <td>{i.status ? <StatusBadge status={i.status} /> : '—'}</td>
                <td className="id">{i.url ?? '—'}</td>
                <td>{formatTime(i.createdAt)}</td>
                <td className="actions">
                  <button type="button" className="danger" aria-label={`Delete ingress ${i.id}`} onClick={() => void remove(i)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function CreateIngressForm(props: {
  api: PageProps['api'];
  appId: string;
  onCreate: (streamId: string, kind: string) => Promise<void>;
}): ReactNode {
  const streams = usePoll(`${props.appId}/streams?open`, (signal) => props.api.get<StreamList>(appPath(props.appId, '/streams'), signal));
  const open = (streams.data?.items ?? []).filter((s) => s.status !== 'ended');
  const [streamId, setStreamId] = useState('');
  const [kind, setKind] = useState('rtmp');
  const selected = open.some((s) => s.id === streamId) ? streamId : (open[0]?.id ?? '');
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    if (selected) await props.onCreate(selected, kind);
  };
  return (
    <form className="panel form-grid" aria-label="Create an ingress" onSubmit={(e) => void submit(e)}>
      <label>
        Into stream
        <select value={selected} onChange={(e) => setStreamId(e.target.value)} disabled={open.length === 0}>
          {open.length === 0 ? <option value="">no open stream</option> : null}
          {open.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name} ({s.status})
            </option>
          ))}
        </select>
      </label>
      <label>
        Protocol
        <select value={kind} onChange={(e) => setKind(e.target.value)}>
          <option value="rtmp">RTMP</option>
          <option value="whip">WHIP</option>
        </select>
      </label>
      <button type="submit" disabled={!selected}>
        Create ingress
      </button>
    </form>
  );
}

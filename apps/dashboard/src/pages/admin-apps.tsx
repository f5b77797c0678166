import { type FormEvent, type ReactNode, useState } from 'react';
import type { Api } from '../api/client.js';
import {
  type AppList,
  type AppView,
  type CapacityCheckResult,
  type CreatedApiKey,
  WORKLOAD_KINDS,
  type WorkloadKind,
} from '../api/types.js';
import { EmptyState, ErrorMessage, Loading, Notice } from '../components/feedback.js';
import { formatTime } from '../format.js';
import type { Navigate } from '../use-route.js';
import { usePoll } from '../use-poll.js';

/** Every app: create one, mint a key for it (shown once), open its pages. */
export function AppsPanel({ api, navigate, onChanged }: { api: Api; navigate: Navigate; onChanged: () => void }): ReactNode {
  const apps = usePoll('apps', (signal) => api.get<AppList>('/v1/apps', signal));
  const [name, setName] = useState('');
  const [error, setError] = useState<{ error: unknown; action: string }>();
  const [created, setCreated] = useState<string>();
  const [key, setKey] = useState<CreatedApiKey>();

  const create = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError(undefined);
    setCreated(undefined);
    try {
      const app = await api.post<AppView>('/v1/apps', { name });
      setCreated(`App “${app.name}” created (${app.id}).`);
      setName('');
      apps.reload();
      onChanged();
    } catch (caught) {
      setError({ error: caught, action: 'Creating the app' });
    }
  };

  const mintKey = async (app: AppView): Promise<void> => {
    setError(undefined);
    try {
      setKey(await api.post<CreatedApiKey>(`/v1/apps/${app.id}/keys`));
    } catch (caught) {
      setError({ error: caught, action: 'Creating a key' });
    }
  };

  return (
    <section aria-labelledby="apps-heading">
      <h2 id="apps-heading">Apps</h2>
      <form className="inline-form" aria-label="Create an app" onSubmit={(e) => void create(e)}>
        <label>
          App name <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} />
        </label>
        <button type="submit">Create app</button>
      </form>
      {error ? <ErrorMessage error={error.error} action={error.action} /> : null}
      {created ? <Notice tone="success">{created}</Notice> : null}
      {key ? (
        <div className="panel secret" role="status">
          <p>
            New key for app <span className="id">{key.appId}</span> (shown once; sign in with it together with the app id):
          </p>
          <code aria-label="New API key">{key.key}</code>
        </div>
      ) : null}
      <ErrorMessage error={apps.error} action="Loading apps" />
      {apps.data === undefined ? (
        apps.error ? null : (
          <Loading what="apps" />
        )
      ) : apps.data.items.length === 0 ? (
        <EmptyState title="No apps yet.">Create the first one above.</EmptyState>
      ) : (
        <table aria-label="Apps">
          <thead>
            <tr>
              <th scope="col">App</th>
              <th scope="col">Streams in use</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {apps.data.items.map((a) => (
              <tr key={a.id}>
                <th scope="row">
                  {a.name}
                  <div className="id">{a.id}</div>
                </th>
                <td>
                  {a.usage.streams} of {a.quotas.maxStreams}
                </td>
                <td>{formatTime(a.createdAt)}</td>
                <td className="actions">
                  <button type="button" onClick={() => navigate({ page: 'streams', appId: a.id })} aria-label={`Open ${a.name}`}>
                    Open
                  </button>
                  <button type="button" onClick={() => void mintKey(a)} aria-label={`New key for ${a.name}`}>
                    New key
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

/** Would this be admitted now? Reserves nothing; names the limit that would refuse it. */
export function WhatIfPanel({ api, apps }: { api: Api; apps: AppView[] }): ReactNode {
  const [appId, setAppId] = useState('');
  const [kind, setKind] = useState<WorkloadKind>('egress.room_composite');
  const [count, setCount] = useState('1');
  const [result, setResult] = useState<CapacityCheckResult>();
  const [error, setError] = useState<unknown>();
  const selected = apps.some((a) => a.id === appId) ? appId : (apps[0]?.id ?? '');

  const check = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError(undefined);
    setResult(undefined);
    try {
      setResult(await api.post<CapacityCheckResult>(`/v1/apps/${selected}/capacity/check`, { kind, count: Number(count) }));
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <section aria-labelledby="whatif-heading" className="panel">
      <h2 id="whatif-heading">Capacity what-if</h2>
      <form className="form-grid" aria-label="Capacity check" onSubmit={(e) => void check(e)}>
        <label>
          For app
          <select value={selected} onChange={(e) => setAppId(e.target.value)} disabled={apps.length === 0}>
            {apps.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Workload
          <select value={kind} onChange={(e) => setKind(e.target.value as WorkloadKind)}>
            {WORKLOAD_KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label>
          How many
          <input type="number" min={1} max={10000} value={count} onChange={(e) => setCount(e.target.value)} />
        </label>
        <button type="submit" disabled={!selected}>
          Check
        </button>
      </form>
      <ErrorMessage error={error} action="Checking capacity" />
      {result ? (
        <p role="status" className={`message ${result.admitted ? 'message-success' : 'message-warning'}`}>
          {result.admitted
            ? `${count} × ${kind} would be admitted now (on ${result.nodeId}).`
            : `${count} × ${kind} would be refused (${result.code.replace(/_/g, ' ')}): ${result.resource} has ${result.used} of ${result.limit} in use, ${result.requested} requested.`}
        </p>
      ) : null}
    </section>
  );
}

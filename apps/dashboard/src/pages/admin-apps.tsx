import type { AppList, AppView, CreatedApiKey } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { useAction, useApi, useApiQuery } from '../api/queries.js';
import { DataTable } from '../components/data-table.js';
import { EmptyState } from '../components/feedback.js';
import { ActionFeedback, FormPanel, ShownOnce } from '../components/form.js';
import { LoadedList } from '../components/loaded.js';
import { formatTime } from '../format.js';
import { useNavigate } from '../navigation.js';
import { describeRate, RateLimitsForm } from './request-rates.js';

/** Every app: create one, mint a key for it (shown once), set its request rates, open its pages. */
export function AppsPanel(): ReactNode {
  const api = useApi();
  const navigate = useNavigate();
  const apps = useApiQuery<AppList>('/v1/apps');
  const [name, setName] = useState('');
  const [key, setKey] = useState<CreatedApiKey>();
  const [ratesOf, setRatesOf] = useState<string>();
  const action = useAction();

  const create = (): Promise<void> =>
    action.run('Creating the app', async () => {
      const app = await api.post<AppView>('/v1/apps', { name });
      setName('');
      return `App “${app.name}” created (${app.id}).`;
    });
  const mintKey = (app: AppView): Promise<void> =>
    action.run('Creating a key', async () => {
      setKey(await api.post<CreatedApiKey>(`/v1/apps/${app.id}/keys`));
      return undefined;
    });

  return (
    <section aria-labelledby="apps-heading">
      <h2 id="apps-heading">Apps</h2>
      <FormPanel className="inline-form" label="Create an app" onSubmit={create}>
        <label>
          App name <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} />
        </label>
        <button type="submit">Create app</button>
      </FormPanel>
      <ActionFeedback action={action} />
      {key ? (
        <ShownOnce
          intro={
            <>
              New key for app <span className="id">{key.appId}</span> (shown once; sign in with it together with the app id):
            </>
          }
        >
          <code aria-label="New API key">{key.key}</code>
        </ShownOnce>
      ) : null}
      <LoadedList query={apps} what="apps" empty={<EmptyState title="No apps yet.">Create the first one above.</EmptyState>}>
        {(items) => {
          const editing = items.find((a) => a.id === ratesOf);
          return (
            <>
              <DataTable
                label="Apps"
                rows={items}
                rowKey={(a) => a.id}
                columns={[
                  {
                    header: 'App',
                    cell: (a) => (
                      <>
                        {a.name}
                        <div className="id">{a.id}</div>
                      </>
                    ),
                  },
                  { header: 'Streams in use', cell: (a) => `${a.usage.streams} of ${a.quotas.maxStreams}` },
                  {
                    header: 'Request rates',
                    cell: (a) => (
                      <>
                        <div>Requests: {describeRate(a, 'requestsPerMinute')}</div>
                        <div>Starts: {describeRate(a, 'startsPerMinute')}</div>
                      </>
                    ),
                  },
                  { header: 'Created', cell: (a) => formatTime(a.createdAt) },
                ]}
                actions={(a) => (
                  <>
                    <button type="button" onClick={() => navigate({ page: 'streams', appId: a.id })} aria-label={`Open ${a.name}`}>
                      Open
                    </button>
                    <button type="button" onClick={() => void mintKey(a)} aria-label={`New key for ${a.name}`}>
                      New key
                    </button>
                    <button type="button" onClick={() => setRatesOf(a.id)} aria-label={`Edit request rates of ${a.name}`}>
                      Rates
                    </button>
                  </>
                )}
              />
              {editing ? <RateLimitsForm key={editing.id} app={editing} /> : null}
            </>
          );
        }}
      </LoadedList>
    </section>
  );
}

import type { AppList, AppView, CreatedApiKey } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { useAction, useApi, useApiQuery } from '../api/queries.js';
import { DataTable } from '../components/data-table.js';
import { EmptyState } from '../components/feedback.js';
import { ActionFeedback, FormPanel, ShownOnce } from '../components/form.js';
import { LoadedList } from '../components/loaded.js';
import { formatTime } from '../format.js';
import { useNavigate } from '../navigation.js';

/** Every app: create one, mint a key for it (shown once), open its pages. */
export function AppsPanel(): ReactNode {
  const api = useApi();
  const navigate = useNavigate();
  const apps = useApiQuery<AppList>('/v1/apps');
  const [name, setName] = useState('');
  const [key, setKey] = useState<CreatedApiKey>();
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
        {(items) => (
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
              </>
            )}
          />
        )}
      </LoadedList>
    </section>
  );
}

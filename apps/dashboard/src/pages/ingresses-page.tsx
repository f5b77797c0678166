import { type CreatedIngress, IngressKind, type IngressList, type IngressView, type StreamList } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { isRouteMissing } from '../api/errors.js';
import { useAction, useApi, useApiQuery } from '../api/queries.js';
import { DataTable } from '../components/data-table.js';
import { EmptyState, StatusBadge } from '../components/feedback.js';
import { ActionFeedback, ConfirmButton, FormPanel, SelectField, ShownOnce } from '../components/form.js';
import { LoadedList } from '../components/loaded.js';
import { formatTime } from '../format.js';
import { appPath, type PageProps } from './page-props.js';

/** RTMP / WHIP ingest into a stream. The API may not have these routes yet: a 404 route says so. */
export function IngressesPage({ appId }: PageProps): ReactNode {
  const api = useApi();
  const ingresses = useApiQuery<IngressList>(appPath(appId, '/ingresses'));
  const action = useAction();
  const [created, setCreated] = useState<CreatedIngress>();

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

  const create = (streamId: string, kind: IngressKind): Promise<void> =>
    action.run('Ingress', async () => {
      setCreated(await api.post<CreatedIngress>(appPath(appId, '/ingresses'), { streamId, kind }));
      return undefined;
    });
  const remove = (ingress: IngressView): Promise<void> =>
    action.run('Deleting the ingress', async () => {
      await api.delete(appPath(appId, `/ingresses/${encodeURIComponent(ingress.id)}`));
      return `Ingress ${ingress.id} deleted.`;
    });

  return (
    <section aria-labelledby="ingresses-heading">
      <h2 id="ingresses-heading">Ingresses</h2>
      <CreateIngressForm appId={appId} onCreate={create} />
      <ActionFeedback action={action} />
      {created ? (
        <ShownOnce
          intro={`Ingress ${created.id} created. Point the encoder at:`}
          facts={[
            ['URL', created.url],
            ['Stream key (shown once)', created.streamKey],
          ]}
        />
      ) : null}
      <LoadedList
        query={ingresses}
        what="ingresses"
        empty={<EmptyState title="No ingresses yet.">Create one to push RTMP or WHIP into a stream.</EmptyState>}
      >
        {(items) => (
          <DataTable
            label="Ingresses"
            rows={items}
            rowKey={(i) => i.id}
            columns={[
              {
                header: 'Ingress',
                cell: (i) => (
                  <>
                    <span className="id">{i.id}</span>
                    <div className="muted-text">stream {i.streamId}</div>
                  </>
                ),
              },
              { header: 'Kind', cell: (i) => i.kind },
              { header: 'Status', cell: (i) => <StatusBadge status={i.status} /> },
              { header: 'URL', cell: (i) => i.url, className: 'id' },
              { header: 'Created', cell: (i) => formatTime(i.createdAt) },
            ]}
            actions={(i) => (
              <ConfirmButton
                text="Delete"
                label={`Delete ingress ${i.id}`}
                question={`Delete ingress ${i.id}?`}
                onConfirm={() => void remove(i)}
              />
            )}
          />
        )}
      </LoadedList>
    </section>
  );
}

const KINDS = IngressKind.options.map((k) => ({ value: k, label: k.toUpperCase() }));

function CreateIngressForm(props: { appId: string; onCreate: (streamId: string, kind: IngressKind) => Promise<void> }): ReactNode {
  const streams = useApiQuery<StreamList>(appPath(props.appId, '/streams'));
  const open = (streams.data?.items ?? []).filter((s) => s.status !== 'ended');
  const [streamId, setStreamId] = useState('');
  const [kind, setKind] = useState<IngressKind>('rtmp');
  const selected = open.some((s) => s.id === streamId) ? streamId : (open[0]?.id ?? '');
  return (
    <FormPanel label="Create an ingress" onSubmit={() => (selected ? props.onCreate(selected, kind) : undefined)}>
      <SelectField
        label="Into stream"
        value={selected}
        options={open.map((s) => ({ value: s.id, label: `${s.name} (${s.status})` }))}
        onChange={setStreamId}
        disabled={open.length === 0}
        empty="no open stream"
      />
      <SelectField label="Protocol" value={kind} options={KINDS} onChange={setKind} />
      <button type="submit" disabled={!selected}>
        Create ingress
      </button>
    </FormPanel>
  );
}

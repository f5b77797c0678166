import { type AppUsageView, type AppView, type CapacityView, QUOTA_FIELD_NAMES, type QuotaField } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { useAction, useApi, useApiQuery } from '../api/queries.js';
import { ErrorMessage, Loading } from '../components/feedback.js';
import { ActionFeedback, FormPanel, SelectField } from '../components/form.js';
import { Gauge } from '../components/gauge.js';
import { Loaded } from '../components/loaded.js';
import { formatCores, formatKbps, formatMb, QUOTA_LABELS } from '../format.js';
import { appPath, type PageProps } from './page-props.js';
import { RequestRates } from './request-rates.js';
import { StoragePanel } from './storage-panel.js';

export function QuotasPage({ appId, session }: PageProps): ReactNode {
  const app = useApiQuery<AppView>(appPath(appId));
  const usage = useApiQuery<AppUsageView>(appPath(appId, '/usage'));
  const explicit = app.data?.explicitQuotas;

  return (
    <section aria-labelledby="quotas-heading">
      <h2 id="quotas-heading">Quotas</h2>
      <p className="muted-text">
        Each limit is a cap: set by the operator, or sized on one node of the pool whatever the number of apps. A guarantee is capacity kept
        free for this app while it does not use it.
      </p>
      <ErrorMessage error={app.error ?? usage.error ?? undefined} action="Loading quotas" />
      {usage.data === undefined || explicit === undefined ? (
        app.error || usage.error ? null : (
          <Loading what="quotas" />
        )
      ) : (
        <div className="gauges">
          {usage.data.items.map((item) => (
            <Gauge
              key={item.quota}
              label={QUOTA_LABELS[item.quota] ?? item.quota}
              used={item.used}
              limit={item.limit}
              detail={`${typeof explicit[item.quota] === 'number' ? 'limit set by the operator' : 'default cap'}; ${
                item.guarantee > 0 ? `${item.guarantee} guaranteed` : 'no guarantee'
              }`}
            />
          ))}
        </div>
      )}
      {app.data && usage.data ? <StoragePanel app={app.data} storage={usage.data.storage} /> : null}
      {app.data ? <RequestRates app={app.data} /> : null}
      {session.kind === 'admin' && app.data ? (
        <>
          <SetQuotaForm app={app.data} kind="limit" />
          <SetQuotaForm app={app.data} kind="guarantee" />
        </>
      ) : null}
      {session.kind === 'admin' ? <PoolHeadroom /> : null}
    </section>
  );
}

const FORM_TEXT = {
  limit: {
    title: 'Set a limit (operator)',
    label: 'Set a quota limit',
    input: 'Limit (empty = default cap)',
    save: 'Save limit',
    saving: 'Saving the limit',
    cleared: 'returned to the default cap',
    set: 'limited',
  },
  guarantee: {
    title: 'Set a guarantee (operator)',
    label: 'Set a quota guarantee',
    input: 'Guarantee (empty = none)',
    save: 'Save guarantee',
    saving: 'Saving the guarantee',
    cleared: 'no longer guaranteed',
    set: 'guaranteed',
  },
} as const;

function SetQuotaForm({ app, kind }: { app: AppView; kind: 'limit' | 'guarantee' }): ReactNode {
  const api = useApi();
  const text = FORM_TEXT[kind];
  const [field, setField] = useState<QuotaField>('maxStreams');
  const [value, setValue] = useState('');
  const action = useAction();

  const submit = (): Promise<void> =>
    action.run(text.saving, async () => {
      const n = value.trim() === '' ? null : Number(value);
      await api.patch<AppView>(appPath(app.id), kind === 'limit' ? { quotas: { [field]: n } } : { guarantees: { [field]: n } });
      return n === null ? `${QUOTA_LABELS[field]} ${text.cleared}.` : `${QUOTA_LABELS[field]} ${text.set} to ${n}.`;
    });

  const now = (f: QuotaField): string =>
    kind === 'limit'
      ? `now ${app.quotas[f]}${typeof app.explicitQuotas[f] === 'number' ? ', set' : ', default'}`
      : `now ${app.guarantees[f]}`;
  const options = QUOTA_FIELD_NAMES.map((f) => ({ value: f, label: `${QUOTA_LABELS[f]} (${now(f)})` }));
  return (
    <FormPanel label={text.label} onSubmit={submit}>
      <h3 className="wide">{text.title}</h3>
      <SelectField label="Quota" value={field} options={options} onChange={setField} />
      <label>
        {text.input}
        <input type="number" min={0} value={value} onChange={(e) => setValue(e.target.value)} />
      </label>
      <button type="submit">{text.save}</button>
      <div className="wide">
        <ActionFeedback action={action} />
      </div>
    </FormPanel>
  );
}

const POOL_GAUGES = [
  { label: 'RAM', field: 'ramMb', format: formatMb, note: '; reserved by admitted work of what Tally may use' },
  { label: 'CPU', field: 'cpuMillicores', format: formatCores, note: '' },
  { label: 'Network', field: 'nicKbps', format: formatKbps, note: '' },
] as const;

function PoolHeadroom(): ReactNode {
  const capacity = useApiQuery<CapacityView>('/v1/capacity');
  return (
    <section aria-labelledby="pool-heading" className="panel">
      <h3 id="pool-heading">Node pool headroom</h3>
      <Loaded query={capacity} what="pool capacity">
        {({ nodes, total, guarantees }) =>
          nodes.length === 0 ? (
            <p className="muted-text">No node is reporting: nothing can be admitted until an agent heartbeats.</p>
          ) : (
            <>
              <div className="gauges">
                {POOL_GAUGES.map(({ label, field, format, note }) => (
                  <Gauge
                    key={label}
                    label={label}
                    used={Math.round(total.reserved[field])}
                    limit={Math.round(total.allocatable[field])}
                    format={format}
                    detail={`${format(total.free[field])} free${note}`}
                  />
                ))}
              </div>
              <GuaranteedHeadroom guarantees={guarantees} />
              <FitsTable fits={total.fits} caption="How many more of each workload the pool takes now" />
            </>
          )
        }
      </Loaded>
    </section>
  );
}

/** Guaranteed vs free: what guarantees promise of the live pool, and what is left for work outside them. */
function GuaranteedHeadroom({ guarantees }: { guarantees: CapacityView['guarantees'] }): ReactNode {
  const { promised, unused, free, allocatable } = guarantees;
  const guaranteed = QUOTA_FIELD_NAMES.filter((f) => guarantees.guaranteed[f] > 0);
  return (
    <div aria-labelledby="guarantees-heading">
      <h4 id="guarantees-heading">Guaranteed vs free</h4>
      <p className="muted-text">
        {guaranteed.length === 0
          ? 'No app has a guarantee: every app may use the whole pool up to its cap.'
          : `Guaranteed: ${guaranteed.map((f) => `${guarantees.guaranteed[f]} ${QUOTA_LABELS[f]}`).join(', ')}. Unused guarantees stay free for their apps.`}
      </p>
      <div className="gauges">
        {POOL_GAUGES.map(({ label, field, format }) => (
          <Gauge
            key={label}
            label={`Guaranteed ${label}`}
            used={Math.round(promised[field])}
            limit={Math.round(allocatable[field])}
            format={format}
            detail={`${format(unused[field])} of it unused; ${format(free[field])} free for work outside guarantees`}
          />
        ))}
      </div>
    </div>
  );
}

export function FitsTable({ fits, caption }: { fits: Record<string, number>; caption: string }): ReactNode {
  return (
    <table aria-label={caption} className="compact">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Workload</th>
          <th scope="col">More that fit</th>
        </tr>
      </thead>
      <tbody>
        {Object.entries(fits).map(([kind, n]) => (
          <tr key={kind}>
            <th scope="row">{kind}</th>
            <td>{n}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

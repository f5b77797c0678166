import { type AppUsageView, type AppView, type CapacityView, QUOTA_FIELD_NAMES, type QuotaField } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { useAction, useApi, useApiQuery } from '../api/queries.js';
import { ErrorMessage, Loading } from '../components/feedback.js';
import { ActionFeedback, FormPanel, SelectField } from '../components/form.js';
import { Gauge } from '../components/gauge.js';
import { Loaded } from '../components/loaded.js';
import { formatCores, formatKbps, formatMb, QUOTA_LABELS } from '../format.js';
import { appPath, type PageProps } from './page-props.js';

export function QuotasPage({ appId, session }: PageProps): ReactNode {
  const app = useApiQuery<AppView>(appPath(appId));
  const usage = useApiQuery<AppUsageView>(appPath(appId, '/usage'));
  const explicit = app.data?.explicitQuotas;

  return (
    <section aria-labelledby="quotas-heading">
      <h2 id="quotas-heading">Quotas</h2>
      <p className="muted-text">
        Each limit is either set by the operator or the app’s fair share of the node pool, which follows the nodes that are up.
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
              detail={typeof explicit[item.quota] === 'number' ? 'limit set by the operator' : 'derived share of the pool'}
            />
          ))}
        </div>
      )}
      {session.kind === 'admin' && app.data ? <SetLimitForm app={app.data} /> : null}
      {session.kind === 'admin' ? <PoolHeadroom /> : null}
    </section>
  );
}

function SetLimitForm({ app }: { app: AppView }): ReactNode {
  const api = useApi();
  const [field, setField] = useState<QuotaField>('maxStreams');
  const [value, setValue] = useState('');
  const action = useAction();

  const submit = (): Promise<void> =>
    action.run('Saving the limit', async () => {
      const limit = value.trim() === '' ? null : Number(value);
      await api.patch<AppView>(appPath(app.id), { quotas: { [field]: limit } });
      return limit === null ? `${QUOTA_LABELS[field]} returned to the derived share.` : `${QUOTA_LABELS[field]} limited to ${limit}.`;
    });

  const options = QUOTA_FIELD_NAMES.map((f) => ({
    value: f,
    label: `${QUOTA_LABELS[f]} (now ${app.quotas[f]}${typeof app.explicitQuotas[f] === 'number' ? ', set' : ', derived'})`,
  }));
  return (
    <FormPanel label="Set a quota limit" onSubmit={submit}>
      <h3 className="wide">Set a limit (operator)</h3>
      <SelectField label="Quota" value={field} options={options} onChange={setField} />
      <label>
        Limit (empty = derived share)
        <input type="number" min={0} value={value} onChange={(e) => setValue(e.target.value)} />
      </label>
      <button type="submit">Save limit</button>
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
        {({ nodes, total }) =>
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
              <FitsTable fits={total.fits} caption="How many more of each workload the pool takes now" />
            </>
          )
        }
      </Loaded>
    </section>
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

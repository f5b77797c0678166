import { type FormEvent, type ReactNode, useState } from 'react';
import { type AppUsageView, type AppView, type CapacityView, QUOTA_FIELDS, type QuotaField } from '../api/types.js';
import { ErrorMessage, Loading, Notice } from '../components/feedback.js';
import { Gauge } from '../components/gauge.js';
import { formatCores, formatKbps, formatMb, QUOTA_LABELS } from '../format.js';
import { usePoll } from '../use-poll.js';
import { appPath, type PageProps } from './page-props.js';

export function QuotasPage({ api, appId, session }: PageProps): ReactNode {
  const app = usePoll(`${appId}/app`, (signal) => api.get<AppView>(appPath(appId), signal));
  const usage = usePoll(`${appId}/usage`, (signal) => api.get<AppUsageView>(appPath(appId, '/usage'), signal));

  return (
    <section aria-labelledby="quotas-heading">
      <h2 id="quotas-heading">Quotas</h2>
      <p className="muted-text">
        Each limit is either set by the operator or the app’s fair share of the node pool, which follows the nodes that are up.
      </p>
      <ErrorMessage error={app.error ?? usage.error} action="Loading quotas" />
      {usage.data === undefined || app.data === undefined ? (
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
              detail={typeof app.data?.explicitQuotas[item.quota] === 'number' ? 'limit set by the operator' : 'derived share of the pool'}
            />
          ))}
        </div>
      )}
      {session.kind === 'admin' && app.data ? (
        <SetLimitForm api={api} app={app.data} onSaved={() => (app.reload(), usage.reload())} />
      ) : null}
      {session.kind === 'admin' ? <PoolHeadroom api={api} /> : null}
    </section>
  );
}

function SetLimitForm({ api, app, onSaved }: { api: PageProps['api']; app: AppView; onSaved: () => void }): ReactNode {
  const [field, setField] = useState<QuotaField>('maxStreams');
  const [value, setValue] = useState('');
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState<string>();

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError(undefined);
    setSaved(undefined);
    const limit = value.trim() === '' ? null : Number(value);
    try {
      await api.patch<AppView>(appPath(app.id), { quotas: { [field]: limit } });
      setSaved(limit === null ? `${QUOTA_LABELS[field]} returned to the derived share.` : `${QUOTA_LABELS[field]} limited to ${limit}.`);
      onSaved();
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <form className="panel form-grid" aria-label="Set a quota limit" onSubmit={(e) => void submit(e)}>
      <h3 className="wide">Set a limit (operator)</h3>
      <label>
        Quota
        <select value={field} onChange={(e) => setField(e.target.value as QuotaField)}>
          {QUOTA_FIELDS.map((f) => (
            <option key={f} value={f}>
              {QUOTA_LABELS[f]} (now {app.quotas[f]}
              {typeof app.explicitQuotas[f] === 'number' ? ', set' : ', derived'})
            </option>
          ))}
        </select>
      </label>
      <label>
        Limit (empty = derived share)
        <input type="number" min={0} value={value} onChange={(e) => setValue(e.target.value)} />
      </label>
      <button type="submit">Save limit</button>
      <div className="wide">
        <ErrorMessage error={error} action="Saving the limit" />
        {saved ? <Notice tone="success">{saved}</Notice> : null}
      </div>
    </form>
  );
}

function PoolHeadroom({ api }: { api: PageProps['api'] }): ReactNode {
  const capacity = usePoll('capacity', (signal) => api.get<CapacityView>('/v1/capacity', signal));
  const total = capacity.data?.total;
  return (
    <section aria-labelledby="pool-heading" className="panel">
      <h3 id="pool-heading">Node pool headroom</h3>
      <ErrorMessage error={capacity.error} action="Loading pool capacity" />
      {total === undefined ? (
        capacity.error ? null : (
          <Loading what="pool capacity" />
        )
      ) : capacity.data?.nodes.length === 0 ? (
        <p className="muted-text">No node is reporting: nothing can be admitted until an agent heartbeats.</p>
      ) : (
        <>
          <div className="gauges">
            <Gauge
              label="RAM"
              used={Math.round(total.reserved.ramMb)}
              limit={Math.round(total.allocatable.ramMb)}
              format={formatMb}
              detail={`${formatMb(total.free.ramMb)} free; reserved by admitted work of what Tally may use`}
            />
            <Gauge
              label="CPU"
              used={Math.round(total.reserved.cpuMillicores)}
              limit={Math.round(total.allocatable.cpuMillicores)}
              format={formatCores}
              detail={`${formatCores(total.free.cpuMillicores)} free`}
            />
            <Gauge
              label="Network"
              used={Math.round(total.reserved.nicKbps)}
              limit={Math.round(total.allocatable.nicKbps)}
              format={formatKbps}
              detail={`${formatKbps(total.free.nicKbps)} free`}
            />
          </div>
          <FitsTable fits={total.fits} caption="How many more of each workload the pool takes now" />
        </>
      )}
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

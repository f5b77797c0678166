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
        Each limit is a cap: set by the operator, or sized on one node of the pool whatever the number of apps. A guarantee is capacity kept
        free for this app while it does not use it.
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
              detail={`${typeof app.data?.explicitQuotas[item.quota] === 'number' ? 'limit set by the operator' : 'default cap'}; ${
                item.guarantee > 0 ? `${item.guarantee} guaranteed` : 'no guarantee'
              }`}
            />
          ))}
        </div>
      )}
      {session.kind === 'admin' && app.data ? (
        <>
          <SetQuotaForm api={api} app={app.data} kind="limit" onSaved={() => (app.reload(), usage.reload())} />
          <SetQuotaForm api={api} app={app.data} kind="guarantee" onSaved={() => (app.reload(), usage.reload())} />
        </>
      ) : null}
      {session.kind === 'admin' ? <PoolHeadroom api={api} /> : null}
    </section>
  );
}

const FORM_TEXT = {
  limit: {
    title: 'Set a limit (operator)',
    input: 'Limit (empty = default cap)',
    save: 'Save limit',
    cleared: 'returned to the default cap',
  },
  guarantee: {
    title: 'Set a guarantee (operator)',
    input: 'Guarantee (empty = none)',
    save: 'Save guarantee',
    cleared: 'no longer guaranteed',
  },
} as const;

function SetQuotaForm(props: { api: PageProps['api']; app: AppView; kind: 'limit' | 'guarantee'; onSaved: () => void }): ReactNode {
  const { api, app, kind, onSaved } = props;
  const text = FORM_TEXT[kind];
  const [field, setField] = useState<QuotaField>('maxStreams');
  const [value, setValue] = useState('');
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState<string>();

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError(undefined);
    setSaved(undefined);
    const n = value.trim() === '' ? null : Number(value);
    try {
      await api.patch<AppView>(appPath(app.id), kind === 'limit' ? { quotas: { [field]: n } } : { guarantees: { [field]: n } });
      setSaved(
        n === null
          ? `${QUOTA_LABELS[field]} ${text.cleared}.`
          : `${QUOTA_LABELS[field]} ${kind === 'limit' ? 'limited' : 'guaranteed'} to ${n}.`,
      );
      onSaved();
    } catch (caught) {
      setError(caught);
    }
  };

  const now = (f: QuotaField): string =>
    kind === 'limit'
      ? `now ${app.quotas[f]}${typeof app.explicitQuotas[f] === 'number' ? ', set' : ', default'}`
      : `now ${app.guarantees[f]}`;

  return (
    <form
      className="panel form-grid"
      aria-label={kind === 'limit' ? 'Set a quota limit' : 'Set a quota guarantee'}
      onSubmit={(e) => void submit(e)}
    >
      <h3 className="wide">{text.title}</h3>
      <label>
        Quota
        <select value={field} onChange={(e) => setField(e.target.value as QuotaField)}>
          {QUOTA_FIELDS.map((f) => (
            <option key={f} value={f}>
              {QUOTA_LABELS[f]} ({now(f)})
            </option>
          ))}
        </select>
      </label>
      <label>
        {text.input}
        <input type="number" min={0} value={value} onChange={(e) => setValue(e.target.value)} />
      </label>
      <button type="submit">{text.save}</button>
      <div className="wide">
        <ErrorMessage error={error} action={kind === 'limit' ? 'Saving the limit' : 'Saving the guarantee'} />
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
          {capacity.data ? <GuaranteedHeadroom guarantees={capacity.data.guarantees} /> : null}
          <FitsTable fits={total.fits} caption="How many more of each workload the pool takes now" />
        </>
      )}
    </section>
  );
}

/** Guaranteed vs free: what guarantees promise of the live pool, and what is left for work outside them. */
function GuaranteedHeadroom({ guarantees }: { guarantees: CapacityView['guarantees'] }): ReactNode {
  const { promised, unused, free, allocatable } = guarantees;
  const guaranteed = QUOTA_FIELDS.filter((f) => guarantees.guaranteed[f] > 0);
  return (
    <div aria-labelledby="guarantees-heading">
      <h4 id="guarantees-heading">Guaranteed vs free</h4>
      <p className="muted-text">
        {guaranteed.length === 0
          ? 'No app has a guarantee: every app may use the whole pool up to its cap.'
          : `Guaranteed: ${guaranteed.map((f) => `${guarantees.guaranteed[f]} ${QUOTA_LABELS[f]}`).join(', ')}. Unused guarantees stay free for their apps.`}
      </p>
      <div className="gauges">
        <Gauge
          label="Guaranteed RAM"
          used={Math.round(promised.ramMb)}
          limit={Math.round(allocatable.ramMb)}
          format={formatMb}
          detail={`${formatMb(unused.ramMb)} of it unused; ${formatMb(free.ramMb)} free for work outside guarantees`}
        />
        <Gauge
          label="Guaranteed CPU"
          used={Math.round(promised.cpuMillicores)}
          limit={Math.round(allocatable.cpuMillicores)}
          format={formatCores}
          detail={`${formatCores(unused.cpuMillicores)} of it unused; ${formatCores(free.cpuMillicores)} free for work outside guarantees`}
        />
        <Gauge
          label="Guaranteed network"
          used={Math.round(promised.nicKbps)}
          limit={Math.round(allocatable.nicKbps)}
          format={formatKbps}
          detail={`${formatKbps(unused.nicKbps)} of it unused; ${formatKbps(free.nicKbps)} free for work outside guarantees`}
        />
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

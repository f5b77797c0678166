import type { AppMeteringView } from '@tally/contracts';
import { lazy, type ReactNode, Suspense, useMemo } from 'react';
import { useApiQuery } from '../api/queries.js';
import { Loading } from '../components/feedback.js';
import { Loaded } from '../components/loaded.js';
import { formatUsage, lastDays, USAGE_DAYS, USAGE_METERS, USAGE_REFRESH_MS } from '../usage-meters.js';
import { appPath, type PageProps } from './page-props.js';

// The charting library loads with this page only.
const UsageChart = lazy(async () => ({ default: (await import('../components/usage-chart.js')).UsageChart }));

/** The app's usage per UTC day over the last 30 days: a chart per meter and the totals of those days. */
export function UsagePage({ appId }: PageProps): ReactNode {
  const day = new Date().toISOString().slice(0, 10);
  const range = useMemo(() => lastDays(new Date(`${day}T12:00:00Z`)), [day]);
  const usage = useApiQuery<AppMeteringView>(appPath(appId, `/metering?from=${range.from}&to=${range.to}&granularity=day`), {
    intervalMs: USAGE_REFRESH_MS,
  });

  return (
    <section aria-labelledby="usage-heading">
      <h2 id="usage-heading">Usage</h2>
      <p className="muted-text">
        What this app used on each of the last {USAGE_DAYS} days (UTC, today so far included), in the units an operator bills in. Whatever
        still runs counts up to now.
      </p>
      <Loaded query={usage} what="usage">
        {(view) => (
          <>
            <UsageTotalsTable view={view} />
            <div className="usage-charts">
              <Suspense fallback={<Loading what="charts" />}>
                {USAGE_METERS.map((meter) => (
                  <UsageChart key={meter.id} meter={meter} buckets={view.buckets} />
                ))}
              </Suspense>
            </div>
          </>
        )}
      </Loaded>
    </section>
  );
}

function UsageTotalsTable({ view }: { view: AppMeteringView }): ReactNode {
  const caption = `Totals, ${view.from.slice(0, 10)} to ${new Date(Date.parse(view.to) - 1).toISOString().slice(0, 10)}`;
  return (
    <table aria-label="Usage totals" className="compact">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Meter</th>
          <th scope="col">Total</th>
          <th scope="col">Of which</th>
        </tr>
      </thead>
      <tbody>
        {USAGE_METERS.map((meter) => (
          <tr key={meter.id} data-meter={meter.id}>
            <th scope="row">{meter.title}</th>
            <td>{formatUsage(meter.total(view), meter.unit)}</td>
            <td>
              {meter.series.length > 1 ? meter.series.map((s) => `${s.name} ${formatUsage(s.value(view), meter.unit)}`).join(' · ') : '—'}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

import type { AllAppsMeteringView, AppView } from '@tally/contracts';
import { type ReactNode, useMemo } from 'react';
import { useApiQuery } from '../api/queries.js';
import { DataTable } from '../components/data-table.js';
import { EmptyState } from '../components/feedback.js';
import { Loaded } from '../components/loaded.js';
import { formatUsage, lastDays, USAGE_DAYS, USAGE_METERS, USAGE_REFRESH_MS } from '../usage-meters.js';

const TOP = 10;
/** The meters most apps use; each app's Usage page has all of them. */
const SHOWN = USAGE_METERS.filter((m) => ['participants', 'streams', 'recordings', 'ingresses', 'storage'].includes(m.id));

/** The apps that used most over the last 30 days (most participant minutes first, as the API sorts them). */
export function TopAppsPanel({ apps }: { apps: AppView[] }): ReactNode {
  const day = new Date().toISOString().slice(0, 10);
  const range = useMemo(() => lastDays(new Date(`${day}T12:00:00Z`)), [day]);
  const usage = useApiQuery<AllAppsMeteringView>(`/v1/metering?from=${range.from}&to=${range.to}`, { intervalMs: USAGE_REFRESH_MS });
  const names = new Map(apps.map((a) => [a.id, a.name]));
  type Row = AllAppsMeteringView['apps'][number];

  return (
    <section aria-labelledby="top-apps-heading">
      <h2 id="top-apps-heading">Top apps by usage</h2>
      <p className="muted-text">The last {USAGE_DAYS} days (UTC); each app's Usage page has its days and every meter.</p>
      <Loaded query={usage} what="usage">
        {(view) =>
          view.apps.length === 0 ? (
            <EmptyState title={`No usage in the last ${USAGE_DAYS} days.`} />
          ) : (
            <DataTable<Row>
              label="Top apps by usage"
              rows={view.apps.slice(0, TOP)}
              rowKey={(a) => a.appId}
              rowAttributes={(a) => ({ 'data-app-id': a.appId })}
              columns={[
                {
                  header: 'App',
                  cell: (a) => (
                    <>
                      {names.get(a.appId) ?? a.appId}
                      <div className="id">{a.appId}</div>
                    </>
                  ),
                },
                ...SHOWN.map((m) => ({ header: m.title, cell: (a: Row) => formatUsage(m.total(a), m.unit) })),
              ]}
            />
          )
        }
      </Loaded>
    </section>
  );
}

import type { AllAppsMeteringView, AppMeteringView } from '@tally/contracts';
import { emptyTotals, flatMeters } from '@tally/metering';

const round = (n: number): string => String(Math.round(n * 1e6) / 1e6);

function line(cells: readonly string[]): string {
  return cells.map((c) => (/[",\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c)).join(',');
}

function meterNames(): string[] {
  return Object.keys(flatMeters(emptyTotals()));
}

/** One row per bucket: app, start, end, then every meter in billing units. */
export function appUsageCsv(view: AppMeteringView): string {
  const rows = [line(['app_id', 'start', 'end', ...meterNames()])];
  for (const b of view.buckets) rows.push(line([view.appId, b.start, b.end, ...Object.values(flatMeters(b.usage)).map(round)]));
  return `${rows.join('\n')}\n`;
}

/** One row per app over the whole range. */
export function allAppsUsageCsv(view: AllAppsMeteringView): string {
  const rows = [line(['app_id', 'start', 'end', ...meterNames()])];
  for (const a of view.apps) rows.push(line([a.appId, view.from, view.to, ...Object.values(flatMeters(a)).map(round)]));
  return `${rows.join('\n')}\n`;
}

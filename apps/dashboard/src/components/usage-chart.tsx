import type { UsageBucket } from '@tally/contracts';
import type { ReactNode } from 'react';
import { CartesianGrid, type DotItemDotProps, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { chartRows, formatUsage, type UsageMeter } from '../usage-meters.js';

const COLORS = ['#2563eb', '#d97706', '#059669', '#7c3aed'] as const;

/**
 * One meter per day: a line per series with a dot per day (no animation, so what is drawn is final).
 * Each dot names its series, day and value, so the drawn chart can be read back.
 */
export function UsageChart({ meter, buckets }: { meter: UsageMeter; buckets: readonly UsageBucket[] }): ReactNode {
  const rows = chartRows(meter, buckets);
  return (
    <figure className="usage-chart" aria-label={`${meter.title} per day`}>
      <figcaption>
        {meter.title} per day ({meter.unit})
      </figcaption>
      <ResponsiveContainer width="100%" height={180}>
        <LineChart data={rows} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e5e7eb" />
          <XAxis dataKey="day" tick={{ fontSize: 11 }} interval="preserveStartEnd" />
          <YAxis tick={{ fontSize: 11 }} width={48} allowDecimals />
          <Tooltip formatter={(value) => formatUsage(Number(value), meter.unit)} />
          {meter.series.length > 1 ? <Legend wrapperStyle={{ fontSize: 12 }} /> : null}
          {meter.series.map((s, i) => {
            const color = COLORS[i % COLORS.length];
            const dot = (p: DotItemDotProps): ReactNode => (
              <circle
                key={`${s.name}-${p.index}`}
                className="usage-dot"
                cx={p.cx}
                cy={p.cy}
                r={2.5}
                fill={color}
                data-series={s.name}
                data-day={rows[p.index]?.['day']}
                data-value={String(rows[p.index]?.[s.name])}
              />
            );
            return (
              <Line
                key={s.name}
                name={s.name}
                dataKey={s.name}
                type="linear"
                stroke={color}
                strokeWidth={2}
                dot={dot}
                isAnimationActive={false}
              />
            );
          })}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  );
}

import type { ReactNode } from 'react';

/** used / limit as a bar with the numbers beside it; over 85 % turns amber, at the limit red. */
export function Gauge(props: { label: string; used: number; limit: number; detail?: string; format?: (n: number) => string }): ReactNode {
  const { label, used, limit, detail, format = String } = props;
  const ratio = limit > 0 ? Math.min(used / limit, 1) : used > 0 ? 1 : 0;
  const level = limit === 0 || used >= limit ? 'full' : ratio >= 0.85 ? 'high' : 'ok';
  return (
    <div className={`gauge gauge-${level}`} role="group" aria-label={`${label} quota`}>
      <div className="gauge-label">
        <span>{label}</span>
        <span className="gauge-numbers">
          {format(used)} of {format(limit)}
        </span>
      </div>
      <meter
        min={0}
        max={Math.max(limit, 1)}
        low={Math.max(limit, 1) * 0.85}
        high={Math.max(limit, 1) * 0.99}
        optimum={0}
        value={Math.min(used, Math.max(limit, 1))}
        aria-label={`${label}: ${format(used)} of ${format(limit)} used`}
      />
      {detail ? <div className="gauge-detail">{detail}</div> : null}
    </div>
  );
}

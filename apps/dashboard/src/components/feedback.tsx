import type { ReactNode } from 'react';
import { describeError } from '../api/errors.js';

/** A failure, read out by screen readers as soon as it appears. */
export function ErrorMessage({ error, action }: { error: unknown; action: string }): ReactNode {
  if (error === undefined || error === null) return null;
  return (
    <p role="alert" className="message message-error">
      {describeError(error, action)}
    </p>
  );
}

export function Notice({ children, tone = 'info' }: { children: ReactNode; tone?: 'info' | 'success' | 'warning' }): ReactNode {
  return (
    <p role="status" className={`message message-${tone}`}>
      {children}
    </p>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }): ReactNode {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children ? <p>{children}</p> : null}
    </div>
  );
}

export function Loading({ what }: { what: string }): ReactNode {
  return (
    <p className="loading" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function StatusBadge({ status }: { status: string }): ReactNode {
  return <span className={`badge badge-${status}`}>{status.replace(/_/g, ' ')}</span>;
}

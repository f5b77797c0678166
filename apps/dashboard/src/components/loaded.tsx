import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ErrorMessage, Loading } from './feedback.js';

/**
 * A query's three states in one place: its failure, "Loading …" before the first answer, then
 * `children` with the data (which stays on screen when a later refresh fails).
 */
export function Loaded<T>(props: { query: UseQueryResult<T>; what: string; action?: string; children: (data: T) => ReactNode }): ReactNode {
  const { query, what } = props;
  const error = query.error ?? undefined;
  return (
    <>
      <ErrorMessage error={error} action={props.action ?? `Loading ${what}`} />
      {query.data === undefined ? error ? null : <Loading what={what} /> : props.children(query.data)}
    </>
  );
}

/** A loaded list: an empty state when it has no items, else `children` with them. */
export function LoadedList<T>(props: {
  query: UseQueryResult<{ items: T[] }>;
  what: string;
  empty: ReactNode;
  children: (items: T[]) => ReactNode;
}): ReactNode {
  return (
    <Loaded query={props.query} what={props.what}>
      {(data) => (data.items.length === 0 ? props.empty : props.children(data.items))}
    </Loaded>
  );
}

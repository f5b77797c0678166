import { ColumnTypeEnum, type SqlQueryable, type SqlResultSet } from '@prisma/driver-adapter-utils';
import pg from 'pg';

/**
 * The schema engine's describer reads catalog columns of Postgres' internal one-byte `"char"` type
 * (OID 18, e.g. `pg_constraint.contype`), which adapter-pg 7.10 rejects as an unsupported type.
 * It must reach the engine as the Character column type: reported as Text, the describer crashes
 * as soon as a CHECK constraint exists.
 *
 * Fix in two steps: a pg client relabels those fields as text so the adapter accepts the result
 * and remembers their positions (keyed by the rows array, which the adapter passes through
 * unchanged), then `reportCharColumns` restores Character for them.
 */
const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

const charColumnsByRows = new WeakMap<unknown[], number[]>();

const relabelCharFields = (result: unknown): void => {
  const results = Array.isArray(result) ? result : [result];
  for (const entry of results) {
    if (!isQueryResult(entry)) continue;
    const positions: number[] = [];
    entry.fields.forEach((field, position) => {
      if (field.dataTypeID !== PG_CHAR_OID) return;
      field.dataTypeID = PG_TEXT_OID;
      positions.push(position);
    });
    if (positions.length > 0) charColumnsByRows.set(entry.rows, positions);
  }
};

const isQueryResult = (value: unknown): value is pg.QueryResult<unknown[]> =>
  typeof value === 'object' && value !== null && Array.isArray((value as { fields?: unknown }).fields);

type Callback = (error: Error | undefined, result: unknown) => void;

/** A pg client for pools handed to adapter-pg; covers both pool queries and transaction clients. */
export class CatalogAwareClient extends pg.Client {
  constructor(config?: pg.ClientConfig) {
    super(config);
    const query = this.query.bind(this) as (...args: unknown[]) => unknown;
    this.query = ((...args: unknown[]): unknown => {
      const last = args.at(-1);
      if (typeof last === 'function') {
        const callback = last as Callback;
        args[args.length - 1] = (error: Error | undefined, result: unknown) => {
          if (error === undefined || error === null) relabelCharFields(result);
          callback(error, result);
        };
        return query(...args);
      }
      const pending = query(...args);
      if (pending instanceof Promise) {
        return pending.then((result: unknown) => {
          relabelCharFields(result);
          return result;
        });
      }
      return pending;
    }) as pg.Client['query'];
  }
}

export const reportCharColumns = (resultSet: SqlResultSet): SqlResultSet => {
  const positions = charColumnsByRows.get(resultSet.rows);
  if (positions === undefined) return resultSet;
  const columnTypes = [...resultSet.columnTypes];
  for (const position of positions) columnTypes[position] = ColumnTypeEnum.Character;
  return { ...resultSet, columnTypes };
};

/** Routes a queryable's results (an adapter's or a transaction's) through `reportCharColumns`. */
export const withCharColumns = <T extends SqlQueryable>(queryable: T): T => {
  const queryRaw = queryable.queryRaw.bind(queryable);
  queryable.queryRaw = async (query) => reportCharColumns(await queryRaw(query));
  return queryable;
};

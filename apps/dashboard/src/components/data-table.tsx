import type { ReactNode } from 'react';

export type Column<T> = Readonly<{ header: string; cell: (row: T) => ReactNode; className?: string }>;

/**
 * A table of rows: the first column is each row's header (what screen readers announce for its
 * cells), the last one holds the row's buttons when `actions` is given.
 */
export function DataTable<T>(props: {
  label: string;
  rows: readonly T[];
  rowKey: (row: T) => string;
  rowAttributes?: (row: T) => Record<`data-${string}`, string>;
  columns: readonly [Column<T>, ...Column<T>[]];
  actions?: (row: T) => ReactNode;
}): ReactNode {
  const [first, ...rest] = props.columns;
  return (
    <table aria-label={props.label}>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th key={c.header} scope="col">
              {c.header}
            </th>
          ))}
          {props.actions ? <th scope="col">Actions</th> : null}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr key={props.rowKey(row)} {...props.rowAttributes?.(row)}>
            <th scope="row">{first.cell(row)}</th>
            {rest.map((c) => (
              <td key={c.header} className={c.className}>
                {c.cell(row)}
              </td>
            ))}
            {props.actions ? <td className="actions">{props.actions(row)}</td> : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

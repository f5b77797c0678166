/** A GitHub-flavoured Markdown table, columns padded so it also reads well in a terminal. */
export function markdownTable(headers: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = [headers.map(String), ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(3, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]) => `| ${widths.map((w, i) => (r[i] ?? '').padEnd(w)).join(' | ')} |`;
  const [head, ...body] = cells;
  return [line(head ?? []), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...body.map(line)].join('\n');
}

/** Formats a number with a fixed number of decimals, or an en dash when there is no figure. */
export function fixed(value: number | undefined, decimals = 0): string {
  return value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(decimals);
}

/** How many times faster or bigger `value` is than `baseline` (e.g. "0.42×"). */
export function ratio(value: number, baseline: number): string {
  return baseline > 0 ? `${(value / baseline).toPrecision(2)}×` : '–';
}

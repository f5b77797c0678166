import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The PromQL the shipped Grafana dashboards and Prometheus alert rules (deploy/) run. */
export type Expression = Readonly<{ file: string; expr: string }>;

function filesUnder(dir: string, extension: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(extension))
    .map((e) => join(e.parentPath, e.name));
}

/** Every `targets[].expr` and templating query of a Grafana dashboard, wherever panels nest. */
function dashboardExpressions(file: string): Expression[] {
  const found: Expression[] = [];
  const walk = (node: unknown, key: string | undefined): void => {
    if (Array.isArray(node)) for (const item of node) walk(item, key);
    else if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
        if (typeof v === 'string' && (k === 'expr' || (key === 'list' && (k === 'query' || k === 'definition'))))
          found.push({ file, expr: v });
        else if (k === 'query' && v !== null && typeof v === 'object' && 'query' in v && typeof v.query === 'string') {
          found.push({ file, expr: v.query });
        } else walk(v, k);
      }
    }
  };
  walk(JSON.parse(readFileSync(file, 'utf8')), undefined);
  return found;
}

/** `expr:` values of a rules file: inline, quoted, or a `|` / `>` block (no YAML dependency needed). */
function ruleExpressions(file: string): Expression[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const found: Expression[] = [];
  for (const [i, line] of lines.entries()) {
    const match = /^(\s*)(?:-\s+)?expr:\s*(.*)$/.exec(line);
    if (!match) continue;
    const [, indent = '', rest = ''] = match;
    if (/^[|>][-+]?$/.test(rest.trim())) {
      const block: string[] = [];
      for (const next of lines.slice(i + 1)) {
        if (next.trim() !== '' && next.search(/\S/) <= indent.length) break;
        block.push(next.trim());
      }
      found.push({ file, expr: block.join(' ') });
    } else found.push({ file, expr: rest.replace(/^(['"])(.*)\1$/, '$2') });
  }
  return found;
}

/** Every expression under deploy/grafana (*.json) and deploy/prometheus (*.yml). */
export function deployExpressions(deployDir: string): Expression[] {
  return [
    ...filesUnder(join(deployDir, 'grafana'), '.json').flatMap(dashboardExpressions),
    ...filesUnder(join(deployDir, 'prometheus'), '.yml').flatMap(ruleExpressions),
  ];
}

/** The tally_* series names those expressions read. */
export function referencedSeries(expressions: readonly Expression[]): Set<string> {
  return new Set(expressions.flatMap(({ expr }) => [...expr.matchAll(/\btally_[a-z0-9_]+/g)].map((m) => m[0])));
}

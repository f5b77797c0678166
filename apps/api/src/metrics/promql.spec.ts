import { join } from 'node:path';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { deployExpressions } from './deploy-queries.js';
import { DEFAULT_METRICS_PREFIX, METRIC_NAMES } from './metric-names.js';

const DEPLOY = join(import.meta.dirname, '../../../../deploy');
const SERIES_SUFFIXES = /_(bucket|sum|count)$/;

function exportedNames(): Set<string> {
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults, prefix: DEFAULT_METRICS_PREFIX });
  return new Set([...METRIC_NAMES, ...defaults.getMetricsAsArray().map((m) => m.name)]);
}

describe('PromQL in deploy/', () => {
  const expressions = deployExpressions(DEPLOY);

  it('finds the dashboards and alert rules', () => {
    expect(expressions.filter((e) => e.file.endsWith('.json')).length).toBeGreaterThan(10);
    expect(expressions.filter((e) => e.file.endsWith('alerts.yml')).length).toBeGreaterThanOrEqual(5);
  });

  it('references only metrics the API exports', () => {
    const exported = exportedNames();
    const unknown = expressions.flatMap(({ file, expr }) =>
      [...expr.matchAll(/\btally_[a-z0-9_]+/g)]
        .map((m) => m[0])
        .filter((name) => !exported.has(name) && !exported.has(name.replace(SERIES_SUFFIXES, '')))
        .map((name) => `${name} in ${file.slice(DEPLOY.length + 1)}: ${expr}`),
    );
    expect(unknown).toEqual([]);
  });
});

import { parseArgs } from 'node:util';

/**
 * `--name value` flags with numeric or list defaults, so every benchmark can be run short while
 * developing (`npm run bench:x -- --duration 2`) and long for the figures that are kept.
 */
export function benchArgs<T extends Record<string, number | readonly number[] | string>>(defaults: T): T {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: Object.fromEntries(Object.keys(defaults).map((k) => [k, { type: 'string' as const }])),
    strict: true,
  });
  const out: Record<string, number | readonly number[] | string> = { ...defaults };
  for (const [key, raw] of Object.entries(values)) {
    if (typeof raw !== 'string') continue;
    const fallback = defaults[key];
    if (Array.isArray(fallback)) out[key] = raw.split(',').map(Number);
    else if (typeof fallback === 'number') out[key] = Number(raw);
    else out[key] = raw;
    const parsed = out[key];
    if ((typeof parsed === 'number' && !Number.isFinite(parsed)) || (Array.isArray(parsed) && parsed.some((n) => !Number.isFinite(n)))) {
      throw new Error(`--${key}: expected ${Array.isArray(fallback) ? 'a comma-separated list of numbers' : 'a number'}, got "${raw}"`);
    }
  }
  return out as T;
}

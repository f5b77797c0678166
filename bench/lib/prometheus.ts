/** Sums every sample of `metric` in a Prometheus text exposition whose labels include all of `labels`. */
export function sumMetric(text: string, metric: string, labels: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(metric)) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match || match[1] !== metric) continue;
    const present = new Map([...(match[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
    if (Object.entries(labels).every(([k, v]) => present.get(k) === v)) sum += Number(match[4]);
  }
  return sum;
}

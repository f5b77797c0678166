import autocannon, { type Request } from 'autocannon';

export type LoadResult = Readonly<{
  /** The mean of the run's per-second counts (autocannon's). */
  reqPerSec: number;
  /** How long the run took. */
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  total: number;
  non2xx: number;
  errors: number;
  statuses: Record<string, number>;
}>;

/** Closed-loop HTTP load: `connections` clients each sending the next request when the last answered. */
export async function httpLoad(options: {
  url: string;
  connections: number;
  durationS: number;
  /** Stop after this many requests instead of after `durationS`. */
  amount?: number;
  headers?: Record<string, string>;
  requests: Request[];
}): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationS,
    ...(options.amount === undefined ? {} : { amount: options.amount }),
    ...(options.headers ? { headers: options.headers } : {}),
    requests: options.requests,
  });
  return {
    reqPerSec: result.requests.average,
    seconds: result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statuses: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count])),
  };
}

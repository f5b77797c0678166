import type { Request } from 'autocannon';

export type LoadSpec = Readonly<{ url: string; headers?: Record<string, string>; requests: Request[]; amount?: number }>;

/** The key the floor of a mint (bare-server.ts) accepts. */
export const BARE_KEY = 'bare-bench-key';

/** A route measured; `load` is asked for just before its run (the end phase ends what the create phase made); `served: 'bare'` when bare-server.ts serves it. */
export type Scenario = Readonly<{ name: string; load: () => LoadSpec; served?: 'bare' }>;

/** The routes measured, each as an autocannon request sequence; the bare route is the baseline. */
export function scenarios(s: { apiUrl: string; bareUrl: string; appId: string; streamId: string; key: string }): Scenario[] {
  const auth = { authorization: `Bearer ${s.key}` };
  const json = { 'content-type': 'application/json' };
  const streams = `/v1/apps/${s.appId}/streams`;
  /** The streams the last create phase made, for the end phase after it to end. */
  const created: string[] = [];
  return [
    {
      name: 'bare fastify route',
      load: () => ({ url: s.bareUrl, requests: [{ method: 'POST', path: '/bare', headers: json, body: '{}' }] }),
    },
    // The floor of a mint (bare-server.ts): what any server answering one must do, without the API's
    // plumbing; each answer at once, then the answers of a loop turn together.
    ...(['bare token mint', 'bare token mint batched'] as const).map((name): Scenario => ({
      name,
      served: 'bare',
      load: () => ({
        url: s.bareUrl,
        headers: { authorization: `Bearer ${BARE_KEY}` },
        requests: [
          {
            method: 'POST',
            path: `/bare${name === 'bare token mint' ? '' : '/batched'}/streams/${s.streamId}/tokens`,
            headers: json,
            body: JSON.stringify({ identity: 'viewer', role: 'viewer' }),
          },
        ],
      }),
    })),
    {
      // Each request creates a stream (admitted through the ledger, stored; its room waits for its first token).
      name: 'stream create',
      load: () => ({
        url: s.apiUrl,
        headers: auth,
        requests: [
          {
            method: 'POST',
            path: streams,
            headers: json,
            body: JSON.stringify({ name: 'bench' }),
            onResponse: (status, body) => {
              if (status !== 201 && process.env['BENCH_DEBUG']) process.stderr.write(`create ${status} ${body}\n`);
              if (status === 201) created.push((JSON.parse(body) as { id: string }).id);
            },
          },
        ],
      }),
    },
    {
      // Ends every stream the create phase made, once each (removes the room, stores the end and its event, releases).
      name: 'stream end',
      load: () => ({
        url: s.apiUrl,
        headers: auth,
        amount: created.length,
        requests: [
          {
            method: 'DELETE',
            onResponse: (status, body) => {
              if (status >= 300 && process.env['BENCH_DEBUG']) process.stderr.write(`end ${status} ${body}\n`);
            },
            setupRequest: (request) => ({ ...request, path: `${streams}/${created.pop() ?? 'none'}` }),
          },
        ],
      }),
    },
    {
      name: 'token mint',
      load: () => ({
        url: s.apiUrl,
        headers: auth,
        requests: [
          {
            method: 'POST',
            path: `${streams}/${s.streamId}/tokens`,
            headers: json,
            body: JSON.stringify({ identity: 'viewer', role: 'viewer' }),
          },
        ],
      }),
    },
    {
      name: 'capacity/check',
      load: () => ({
        url: s.apiUrl,
        headers: auth,
        requests: [
          {
            method: 'POST',
            path: `/v1/apps/${s.appId}/capacity/check`,
            headers: json,
            body: JSON.stringify({ kind: 'egress.track', count: 1 }),
          },
        ],
      }),
    },
  ];
}

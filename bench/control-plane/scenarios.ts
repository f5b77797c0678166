import type { Request } from 'autocannon';

export type Scenario = Readonly<{ name: string; load: { url: string; headers?: Record<string, string>; requests: Request[] } }>;

/** The routes measured, each as an autocannon request sequence; the bare route is the baseline. */
export function scenarios(s: { apiUrl: string; bareUrl: string; appId: string; streamId: string; key: string }): Scenario[] {
  const auth = { authorization: `Bearer ${s.key}` };
  const json = { 'content-type': 'application/json' };
  const streams = `/v1/apps/${s.appId}/streams`;
  return [
    { name: 'bare fastify route', load: { url: s.bareUrl, requests: [{ method: 'POST', path: '/bare', headers: json, body: '{}' }] } },
    {
      // Each connection creates a stream (admitted through the ledger) and ends it (releasing it).
      name: 'stream create + end',
      load: {
        url: s.apiUrl,
        headers: auth,
        requests: [
          {
            method: 'POST',
            path: streams,
            headers: json,
            body: JSON.stringify({ name: 'bench' }),
            onResponse: (status, body, context) => {
              if (status !== 201 && process.env['BENCH_DEBUG']) process.stderr.write(`create ${status} ${body}\n`);
              context['streamId'] = status === 201 ? (JSON.parse(body) as { id: string }).id : undefined;
            },
          },
          {
            method: 'DELETE',
            onResponse: (status, body) => {
              if (status >= 300 && process.env['BENCH_DEBUG']) process.stderr.write(`end ${status} ${body}\n`);
            },
            setupRequest: (request, context) => ({
              ...request,
              path: `${streams}/${typeof context['streamId'] === 'string' ? context['streamId'] : 'none'}`,
            }),
          },
        ],
      },
    },
    {
      name: 'token mint',
      load: {
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
      },
    },
    {
      name: 'capacity/check',
      load: {
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
      },
    },
  ];
}

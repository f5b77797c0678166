import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { redisConnectionOptions } from '@tally/config';
import { type JoinTokenView, type StreamView, type WebhookDeliveryList, type WebhookSecretView } from '@tally/contracts';
import {
  ApiClient,
  type Child,
  createStream,
  createTenant,
  freePort,
  startAppProcess,
  startChild,
  startStack,
  type TestStack,
  waitFor,
} from '@tally/testing';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { sweepOnce } from '../../worker/test/sweep.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addHost, forward, installOnNode, nodeHome, readableCheckout, removeHome, type TwoHosts } from './joined-node.js';

const run = promisify(execFile);

type Received = Readonly<{ headers: IncomingHttpHeaders; body: string }>;

/**
 * The origin (the test stack, its API a process of its own) and a host that joins it with
 * ./install.sh --join --role control: a second API and worker on the origin's PostgreSQL and Redis.
 */
describe('install.sh --join --role control', () => {
  let hosts: TwoHosts;
  let stack: TestStack;
  let originApi: Child | undefined;
  let originWorker: Child | undefined;
  let caddy: Child | undefined;
  let caddyLog = '';
  let caddyUrl = '';
  let admin: ApiClient;
  let originUrl: string;
  let nodeUrl: string;
  let home = '';
  let originEnv: Record<string, string> = {};
  const forwarders: Server[] = [];
  const received: Received[] = [];
  let receiver: HttpServer | undefined;
  let receiverUrl = '';
  const name = `cp-${randomBytes(3).toString('hex')}`;
  const log = (what: string) => join(tmpdir(), `tally-control-${what}-${Date.now()}.log`);

  beforeAll(async () => {
    await readableCheckout();
    hosts = await addHost();
    const [redisPort, apiPort, pgPort, livekitPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    originUrl = `http://${hosts.originIp}:${apiPort}`;
    stack = await startStack({
      env: {
        TALLY_PUBLIC_URL: originUrl,
        TALLY_CLUSTER_REDIS_URL: `redis://${hosts.originIp}:${redisPort}`,
        // The origin's LiveKit as the node's API reaches it.
        LIVEKIT_PUBLIC_URL: `ws://${hosts.originIp}:${livekitPort}`,
        // The app's webhook endpoint listens on the origin's cluster address.
        TALLY_WEBHOOK_ALLOW_CIDRS: `127.0.0.0/8,::1/128,${hosts.originIp}/32`,
        // The origin's live HLS directory, which a control node mounts at the same path (here: the same filesystem).
        TALLY_HLS_DIR: mkdtempSync(join(tmpdir(), 'tally-control-hls-')),
      },
    });
    // What install.sh --cluster-bind --control-nodes opens on a real origin: Redis, PostgreSQL, LiveKit and the API on the cluster address.
    const database = new URL(stack.config.databaseUrl);
    forwarders.push(await forward(hosts.originIp, redisPort, stack.redis.port));
    forwarders.push(await forward(hosts.originIp, pgPort, Number(database.port)));
    forwarders.push(await forward(hosts.originIp, livekitPort, Number(new URL(stack.livekit.url).port)));
    forwarders.push(await forward(hosts.originIp, apiPort, stack.config.http.port));
    database.hostname = hosts.originIp;
    database.port = String(pgPort);
    originEnv = { ...stack.env, TALLY_CLUSTER_DATABASE_URL: database.toString() };
    originApi = await startAppProcess('api', originEnv, log('origin-api'));
    admin = new ApiClient(`http://127.0.0.1:${stack.config.http.port}`).withKey(stack.adminKey);
    nodeUrl = `http://${hosts.nodeIp}:8080`;
    home = nodeHome();
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ headers: request.headers, body });
        response.writeHead(204).end();
      });
    });
    const receiverPort = await freePort();
    await new Promise<void>((ok) => receiver?.listen(receiverPort, hosts.originIp, ok));
    receiverUrl = `http://${hosts.originIp}:${receiverPort}/hooks`;
  });

  afterAll(async () => {
    if (home && existsSync(join(home, 'run', 'mode'))) await installOnNode(hosts.ns, ['--stop', '--home', home]);
    await caddy?.stop();
    await originWorker?.stop();
    await originApi?.stop();
    receiver?.close();
    for (const server of forwarders) server.close();
    await stack?.stop();
    await hosts?.remove();
    if (home) removeHome(home);
  });

  /** POST /v1/reconcile, then the worker's sweep job read back from BullMQ (through the Sentinels where there are). */
  const sweepRoundTrip = () => sweepOnce(admin, redisConnectionOptions(stack.config.redis, { maxRetriesPerRequest: null }));

  it('--help and --dry-run show the control role: the API and worker, no agent, no LiveKit', async () => {
    const checkout = await readableCheckout();
    const help = (await run('bash', [join(checkout, 'install.sh'), '--help'])).stdout;
    expect(help).toContain('--role media|worker|gpu|control');
    expect(help).toContain('control: a second API and worker');
    expect(help).toContain('--control-nodes L');

    const dryHome = `${home}-dry`;
    const dry = await installOnNode(hosts.ns, [
      ...['--join', originUrl, '--token', 'tjt_x', '--role', 'control', '--name', 'dry-cp', '--insecure-http'],
      ...['--home', dryHome, '--dry-run'],
    ]);

    expect(dry.code, dry.output).toBe(0);
    expect(dry.output).toContain(`would POST ${originUrl}/v1/nodes/join {name: dry-cp, role: control, token}`);
    expect(dry.output).toContain("also the origin's database URL, secrets key, admin key and metrics token");
    expect(dry.output).toContain('would start api');
    expect(dry.output).toContain('would start worker');
    expect(dry.output).not.toContain('would start agent');
    expect(dry.output).not.toContain('would start livekit');
    expect(dry.output).not.toContain('scripts/provision/egress.sh');
    expect(existsSync(dryHome)).toBe(false);
  });

  it("joins with a control token: its API answers an app's requests with the origin's data", { timeout: 600_000 }, async () => {
    const created = await admin.post<JoinTokenView>('/v1/nodes/join-tokens', { name, role: 'control' });
    expect(created.status).toBe(201);
    expect(created.body.command).toContain(`--role control --name ${name}`);

    const joined = await installOnNode(
      hosts.ns,
      [
        ...['--join', originUrl, '--token', created.body.token, '--role', 'control', '--name', name, '--insecure-http'],
        ...['--home', home, '--no-provision', '--no-systemd', '--no-sysctl', '--offline', '--node-ip', hosts.nodeIp],
      ],
      { TALLY_HEALTH_TIMEOUT: '180' },
    );

    expect(joined.code, joined.output).toBe(0);
    expect((await run('stat', ['-c', '%U:%G %a', join(home, 'tally.env')])).stdout.trim()).toBe('root:tally 640');
    const env = readFileSync(join(home, 'tally.env'), 'utf8');
    expect(new URL(/^REDIS_URL=(.*)$/m.exec(env)?.[1] ?? '').username).toBe(`tally-node-${name}`);
    expect(new URL(/^DATABASE_URL=(.*)$/m.exec(env)?.[1] ?? '').hostname).toBe(hosts.originIp);

    const { app, client } = await createTenant(admin, `control-${randomBytes(3).toString('hex')}`);
    const stream = await createStream(client, app.id, 'made at the origin');
    const atNode = await client.at(nodeUrl).get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`);
    expect(atNode.status).toBe(200);
    expect(atNode.body).toMatchObject({ id: stream.id, name: 'made at the origin' });
    expect((await client.at(nodeUrl).get(`/v1/apps/app_${randomBytes(8).toString('hex')}/streams`)).status).toBe(404);
  });

  it("the origin's Caddy balances over both APIs: a POST meeting the stopped origin API is sent to the node's, body and all", async () => {
    const caddyPort = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'tally-control-caddy-'));
    // The routes install.sh --domain --control-nodes writes into the origin's Caddyfile.
    const routes = (
      await run(
        'bash',
        [
          '-c',
          'set -eu; declare -A PORT=([api]="$1"); source scripts/install/control.sh; CONTROL_NODES="$2"; caddy_api_routes',
          'routes',
          String(stack.config.http.port),
          `${hosts.nodeIp}:8080`,
        ],
        { cwd: await readableCheckout() },
      )
    ).stdout;
    // debug: Caddy logs every try (which API, the error), so the test can tell a POST met the stopped API.
    writeFileSync(join(dir, 'Caddyfile'), `{\n\tadmin off\n\tdebug\n}\nhttp://127.0.0.1:${caddyPort} {\n\thandle {\n${routes}\t}\n}\n`);
    caddyLog = log('caddy');
    caddy = startChild('caddy', ['run', '--adapter', 'caddyfile', '--config', join(dir, 'Caddyfile')], caddyLog, {
      ...process.env,
      XDG_CONFIG_HOME: dir,
      XDG_DATA_HOME: dir,
    });
    caddyUrl = `http://127.0.0.1:${caddyPort}`;
    const originApiAddress = `127.0.0.1:${stack.config.http.port}`;
    const { app, client } = await createTenant(admin, `balanced-${randomBytes(3).toString('hex')}`);
    const balanced = client.at(caddyUrl);
    await waitFor('Caddy answering', async () =>
      (await balanced.get('/healthz').catch(() => undefined))?.status === 200 ? true : undefined,
    );

    // Four POSTs at once right after the origin's API died: each goes to the API with fewer requests in
    // flight (ties at random), so one of them meets it but for a 1-in-16 draw. Should none have (or a
    // health check have left it out first), it is started and killed again.
    let metRefusal = false;
    const made: StreamView[] = [];
    for (let attempt = 1; attempt <= 4 && !metRefusal; attempt += 1) {
      if (!originApi) {
        originApi = await startAppProcess('api', originEnv, log('origin-api-again'));
        const seen = caddyTries(caddyLog).length;
        await waitFor('Caddy sending a request to the origin API again', async () => {
          await balanced.get('/healthz');
          return caddyTries(caddyLog)
            .slice(seen)
            .some((t) => t.upstream === originApiAddress && !t.error)
            ? true
            : undefined;
        });
      }
      await originApi.stop('SIGKILL');
      originApi = undefined;
      const seen = caddyTries(caddyLog).length;
      const answers = await Promise.all(
        [1, 2, 3, 4].map((n) =>
          balanced.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: `made while the origin API is down ${attempt}.${n}` }),
        ),
      );
      expect(
        answers.map((a) => a.status),
        JSON.stringify(answers.map((a) => a.body)),
      ).toEqual([201, 201, 201, 201]);
      made.push(...answers.map((a) => a.body));
      metRefusal = caddyTries(caddyLog)
        .slice(seen)
        .some((t) => t.method === 'POST' && t.upstream === originApiAddress && /connection refused/.test(t.error ?? ''));
    }
    expect(metRefusal, 'a POST met the stopped API and was sent to the node with its body').toBe(true);

    for (const stream of made) {
      const atNode = await client.at(nodeUrl).get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`);
      expect(atNode.status).toBe(200);
      expect(atNode.body.name).toBe(stream.name);
    }
    for (let i = 0; i < 2; i += 1) expect((await balanced.get(`/v1/apps/${app.id}/streams`)).status).toBe(200);

    // With the origin's API still stopped, 5,000 POSTs, 20 at a time (as the operator: an app's rate limit
    // would refuse them): every one reaches the node's API (404: no such route), none is answered 503
    // "no upstreams available" by a pick that missed it.
    const operator = admin.at(caddyUrl);
    const statuses: Record<string, number> = {};
    for (let batch = 0; batch < 250; batch += 1) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => operator.post(`/v1/apps/${app.id}/no-such-route`, { name: 'x' })));
      for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
    }
    expect(statuses).toEqual({ 404: 5000 });
  });

  it("delivers an app's webhook from the node's worker, signed with the app's secret, while the origin runs no worker", async () => {
    // The origin's API is stopped (above) and the origin runs no worker: only the node can do this.
    const nodeAdmin = admin.at(nodeUrl);
    const { app, client } = await createTenant(nodeAdmin, `hooks-${randomBytes(3).toString('hex')}`);
    const secret = (await client.post<WebhookSecretView>(`/v1/apps/${app.id}/webhook-secret`)).body.secret;
    expect((await client.patch(`/v1/apps/${app.id}`, { webhookUrl: receiverUrl })).status).toBe(200);
    const stream = await createStream(client, app.id, 'ends at once');
    expect((await client.delete(`/v1/apps/${app.id}/streams/${stream.id}`)).status).toBe(200);

    const delivery = await waitFor(
      'a delivered webhook',
      async () => {
        const items = (await client.get<WebhookDeliveryList>(`/v1/apps/${app.id}/webhook-deliveries`)).body.items;
        return items.find((d) => d.status === 'delivered');
      },
      60_000,
    );
    const hit = received.find((r) => r.body.includes(stream.id));
    expect(hit, 'the receiver got the event').toBeDefined();
    expect(() => new Webhook(secret).verify(hit?.body ?? '', hit?.headers as Record<string, string>)).not.toThrow();
    expect(hit?.headers['webhook-id']).toBe(delivery.eventId);
  });

  it(
    "with the node's host gone (its link down, then its processes frozen), the dashboard, admission and webhooks go on through the origin",
    { timeout: 600_000 },
    async () => {
      originApi = await startAppProcess('api', originEnv, log('origin-api-back'));
      originWorker = await startAppProcess('worker', originEnv, log('origin-worker'));
      const nodeApiAddress = `${hosts.nodeIp}:8080`;
      const { app, client } = await createTenant(admin, `gone-${randomBytes(3).toString('hex')}`, { maxStreams: 50 });
      const secret = (await client.post<WebhookSecretView>(`/v1/apps/${app.id}/webhook-secret`)).body.secret;
      expect((await client.patch(`/v1/apps/${app.id}`, { webhookUrl: receiverUrl })).status).toBe(200);
      const small = await createTenant(admin, `gone-quota-${randomBytes(3).toString('hex')}`, { maxStreams: 1 });
      const balanced = client.at(caddyUrl);
      const report: string[] = [];

      for (const gone of ['link down', 'frozen'] as const) {
        const seen = caddyTries(caddyLog).length;
        await waitFor(
          'Caddy sending requests to both APIs',
          async () => {
            await balanced.get('/healthz');
            const upstreams = new Set(
              caddyTries(caddyLog)
                .slice(seen)
                .filter((t) => !t.error)
                .map((t) => t.upstream),
            );
            return upstreams.size === 2 ? true : undefined;
          },
          120_000,
        );
        const pids = (await run('ip', ['netns', 'pids', hosts.ns])).stdout.split(/\s+/).filter(Boolean);
        const triesBefore = caddyTries(caddyLog).length;
        const t0 = Date.now();
        if (gone === 'link down') await run('ip', ['-n', hosts.ns, 'link', 'set', 'tj1', 'down']);
        else for (const pid of pids) process.kill(Number(pid), 'SIGSTOP');

        // What the dashboard does (its page, the app's streams) and what an app does (start a stream, end
        // it), a round every 300 ms without waiting for answers: some meet the gone host.
        type Answer = Readonly<{ what: string; status: number; ms: number }>;
        const asked: Promise<Answer>[] = [];
        const ask = (what: string, call: () => Promise<{ status: number }>) => {
          const started = Date.now();
          asked.push(call().then(({ status }) => ({ what, status, ms: Date.now() - started })));
        };
        for (let round = 0; round < 20; round += 1) {
          ask('GET /dashboard/', () => balanced.raw('/dashboard/'));
          ask('GET streams', () => balanced.get(`/v1/apps/${app.id}/streams`));
          ask('POST stream', async () => {
            const made = await balanced.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: `${gone} ${round}` });
            if (made.status !== 201) return made;
            return balanced.delete(`/v1/apps/${app.id}/streams/${made.body.id}`).then((ended) => ({
              status: ended.status === 200 ? 201 : ended.status,
            }));
          });
          await new Promise((r) => setTimeout(r, 300));
        }
        // Caddy has left the gone host out: the next requests are all answered, by the origin.
        const outAfterMs = await waitFor(
          'Caddy leaving the gone host out',
          async () => {
            const mark = caddySelections(caddyLog).length;
            const probes = [1, 2, 3, 4].map(() => {
              const started = Date.now();
              return balanced
                .get(`/v1/apps/${app.id}/streams`)
                .then(({ status }) => ({ what: 'GET streams', status, ms: Date.now() - started }));
            });
            asked.push(...probes);
            // A probe that met the frozen host answers only once it thaws: it is awaited with the others at the end.
            const settled = await Promise.race([
              Promise.all(probes),
              new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000)),
            ]);
            return settled &&
              caddySelections(caddyLog)
                .slice(mark)
                .every(({ upstream }) => upstream !== nodeApiAddress)
              ? Date.now() - t0
              : undefined;
          },
          120_000,
        );
        // Admission answers: a stream within the quota, a refusal naming it past it.
        const first = await small.client.at(caddyUrl).post<StreamView>(`/v1/apps/${small.app.id}/streams`, { name: 'one' });
        expect(first.status).toBe(201);
        const refused = await small.client
          .at(caddyUrl)
          .post<{ error: { code: string; resource: string } }>(`/v1/apps/${small.app.id}/streams`, { name: 'two' });
        expect(refused.status).toBe(429);
        expect(refused.body.error).toMatchObject({ code: 'quota_exceeded', resource: 'app.streams' });
        expect((await small.client.at(caddyUrl).delete(`/v1/apps/${small.app.id}/streams/${first.body.id}`)).status).toBe(200);
        // A webhook for an event of this moment is delivered (by the origin's worker), once.
        const hooked = await createStream(balanced, app.id, `hooked while ${gone}`);
        expect((await balanced.delete(`/v1/apps/${app.id}/streams/${hooked.id}`)).status).toBe(200);
        const delivery = await waitFor(
          `the webhook for the stream ended while ${gone}`,
          async () => {
            const items = (await balanced.get<WebhookDeliveryList>(`/v1/apps/${app.id}/webhook-deliveries`)).body.items;
            return items.find(
              (d) => d.status === 'delivered' && received.some((r) => r.headers['webhook-id'] === d.eventId && r.body.includes(hooked.id)),
            );
          },
          120_000,
        );
        const deliveredAfterMs = Date.now() - t0;

        const restoredAt = Date.now();
        if (gone === 'link down') await run('ip', ['-n', hosts.ns, 'link', 'set', 'tj1', 'up']);
        else for (const pid of pids) process.kill(Number(pid), 'SIGCONT');
        const answers = await Promise.all(asked);
        const hits = received.filter((r) => r.headers['webhook-id'] === delivery.eventId);
        expect(hits).toHaveLength(1);
        expect(() => new Webhook(secret).verify(hits[0]?.body ?? '', hits[0]?.headers as Record<string, string>)).not.toThrow();
        expect(answers.filter((a) => a.status !== 200 && a.status !== 201)).toEqual([]);
        const toGoneHost = caddyTries(caddyLog)
          .slice(triesBefore)
          .filter((t) => t.upstream === nodeApiAddress && t.sentAt < restoredAt);
        const slowest = Math.max(...answers.map((a) => a.ms));
        const lastToGoneHostS = Math.max(
          0,
          ...caddySelections(caddyLog)
            .filter((c) => c.upstream === nodeApiAddress && c.at >= t0 && c.at < restoredAt)
            .map((c) => (c.at - t0) / 1_000),
        );
        report.push(
          `  ${gone}: ${answers.length} requests (dashboard page, streams list, stream start + end) while it was gone, all answered; ` +
            `${toGoneHost.length} tries met the gone host (${[...new Set(toGoneHost.map((t) => t.error ?? 'answered'))].join('; ')}); ` +
            `slowest answer ${(slowest / 1_000).toFixed(1)} s; Caddy sent it its last request ${lastToGoneHostS.toFixed(1)} s in (answers all from the origin by ${(outAfterMs / 1_000).toFixed(1)} s); ` +
            `webhook of that moment delivered once after ${(deliveredAfterMs / 1_000).toFixed(1)} s; back after ${((restoredAt - t0) / 1_000).toFixed(1)} s`,
        );
      }

      // The reservation audit finds nothing held for a stream that ended.
      const audit = await sweepRoundTrip();
      expect(audit['reservations']).toEqual({});
      console.log(
        [`[one API replica's host gone] Caddy: health every 2 s (5 s timeout), dial timeout 3 s, no kept connections`, ...report].join(
          '\n',
        ),
      );
    },
  );

  it("--leave stops the node's API and worker and revokes its Redis user", async () => {
    originApi ??= await startAppProcess('api', originEnv, log('origin-api-again'));

    const left = await installOnNode(hosts.ns, ['--leave', '--home', home]);

    expect(left.code, left.output).toBe(0);
    expect(left.output).not.toContain('drain');
    const redis = new Redis(stack.redis.url);
    try {
      expect(await redis.call('ACL', 'GETUSER', `tally-node-${name}`)).toBeNull();
    } finally {
      redis.disconnect();
    }
    expect(existsSync(join(home, 'tally.env'))).toBe(false);
    expect(
      await fetch(`${nodeUrl}/healthz`).then(
        (r) => r.status,
        () => 'refused',
      ),
    ).toBe('refused');
  });
});

type CaddyTry = Readonly<{ upstream: string; method: string; sentAt: number; error?: string }>;

/** Every try Caddy logged (debug, once it ended): which API it sent a request to, when (ms), and the error when it failed. */
function caddyTries(logFile: string): CaddyTry[] {
  if (!existsSync(logFile)) return [];
  const tries: CaddyTry[] = [];
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('"upstream roundtrip"')) continue;
    try {
      const entry = JSON.parse(line) as { ts: number; duration: number; upstream: string; error?: string; request?: { method?: string } };
      tries.push({
        upstream: entry.upstream,
        method: entry.request?.method ?? '',
        sentAt: (entry.ts - entry.duration) * 1_000,
        ...(entry.error ? { error: entry.error } : {}),
      });
    } catch {
      // a line still being written
    }
  }
  return tries;
}

/** The API Caddy chose for each request (debug), in order, logged before it is sent: when (ms) and which. */
function caddySelections(logFile: string): Readonly<{ at: number; upstream: string }>[] {
  if (!existsSync(logFile)) return [];
  return [
    ...readFileSync(logFile, 'utf8').matchAll(
      /"ts":([0-9.]+),"logger":"http.handlers.reverse_proxy","msg":"selected upstream","dial":"([^"]+)"/g,
    ),
  ].map((m) => ({
    at: Number(m[1]) * 1_000,
    upstream: m[2] ?? '',
  }));
}

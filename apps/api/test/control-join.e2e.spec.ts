import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { JoinTokenView, StreamView, WebhookDeliveryList, WebhookSecretView } from '@tally/contracts';
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
  let caddy: Child | undefined;
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
    await originApi?.stop();
    receiver?.close();
    for (const server of forwarders) server.close();
    await stack?.stop();
    await hosts?.remove();
    if (home) removeHome(home);
  });

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

  it("the origin's Caddy balances over both APIs: with the origin's API stopped, requests are answered by the node's", async () => {
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
    writeFileSync(join(dir, 'Caddyfile'), `{\n\tadmin off\n}\nhttp://127.0.0.1:${caddyPort} {\n\thandle {\n${routes}\t}\n}\n`);
    caddy = startChild('caddy', ['run', '--adapter', 'caddyfile', '--config', join(dir, 'Caddyfile')], log('caddy'), {
      ...process.env,
      XDG_CONFIG_HOME: dir,
      XDG_DATA_HOME: dir,
    });
    const { app, client } = await createTenant(admin, `balanced-${randomBytes(3).toString('hex')}`);
    const balanced = client.at(`http://127.0.0.1:${caddyPort}`);
    await waitFor('Caddy answering', async () =>
      (await balanced.get('/healthz').catch(() => undefined))?.status === 200 ? true : undefined,
    );

    await originApi?.stop();
    originApi = undefined;

    // GETs meeting the stopped API are sent again to the node's (two: round robin gives the origin one);
    // the refused connection also leaves the origin's API out for the next requests, so a POST (whose
    // body Caddy 2.6 cannot send twice, caddyserver/caddy#7546) goes to the node.
    for (let i = 0; i < 2; i += 1) expect((await balanced.get(`/v1/apps/${app.id}/streams`)).status).toBe(200);
    const made = await balanced.post<StreamView>(`/v1/apps/${app.id}/streams`, { name: 'made while the origin API is down' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect((await balanced.get<StreamView>(`/v1/apps/${app.id}/streams/${made.body.id}`)).body.name).toBe(
      'made while the origin API is down',
    );
    expect((await client.at(nodeUrl).get<StreamView>(`/v1/apps/${app.id}/streams/${made.body.id}`)).status).toBe(200);
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

  it("--leave stops the node's API and worker and revokes its Redis user", async () => {
    originApi = await startAppProcess('api', originEnv, log('origin-api-again'));

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

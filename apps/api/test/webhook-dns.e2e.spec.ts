import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { AppView, StreamView, WebhookSecretView } from '@tally/contracts';
import { newId } from '@tally/contracts';
import { createPrismaClient } from '@tally/db';
import { ApiClient, appCommand, type Child, startChild, startStack, TestDnsServer, type TestStack, waitFor } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStream, createTenant } from './api-harness.js';
import { SignedReceiver } from './signed-receiver.js';

/** Each stalled name is given this long by the host's resolver (glibc's maximum), far beyond the budgets below. */
const RESOLV_CONF_TIMEOUT_S = 30;
const PROMPT_MS = 3_000;

/**
 * The host's resolver (resolv.conf) points at a DNS server that never answers for one tenant's
 * webhook domain: that tenant's lookups must not hold the threads the API serves files with, nor
 * the worker's other tenants' deliveries.
 */
describe('a webhook domain whose DNS never answers', () => {
  let stack: TestStack;
  let dns: TestDnsServer;
  let receiver: SignedReceiver;
  const processes: Child[] = [];
  let admin: ApiClient;

  /** Runs `name` in its own mount namespace where /etc/resolv.conf names only the test's DNS server. */
  const startWithResolver = (name: 'api' | 'worker', resolvConf: string): Child =>
    startChild(
      'unshare',
      [
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        'mount --bind "$0" /etc/resolv.conf && exec "$@"',
        resolvConf,
        process.execPath,
        ...appCommand(name),
      ],
      join(tmpdir(), `tally-webhook-dns-${name}-${process.pid}.log`),
      { ...process.env, ...stack.env },
    );

  beforeAll(async () => {
    stack = await startStack();
    const host = `127.53.${1 + Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
    dns = await TestDnsServer.start({
      host,
      port: 53,
      records: { 'hooks.good.test': '127.0.0.1' },
      blackHoled: ['hooks.hole.test', 'a.hole.test', 'b.hole.test', 'c.hole.test', 'd.hole.test'],
    });
    const resolvConf = join(mkdtempSync(join(tmpdir(), 'tally-resolv-')), 'resolv.conf');
    writeFileSync(resolvConf, `nameserver ${host}\noptions timeout:${RESOLV_CONF_TIMEOUT_S} attempts:1\n`);
    receiver = await SignedReceiver.start();
    processes.push(startWithResolver('api', resolvConf), startWithResolver('worker', resolvConf));
    admin = new ApiClient(`http://127.0.0.1:${stack.config.http.port}`, stack.adminKey);
    await waitFor(
      'the api',
      async () =>
        (await fetch(`http://127.0.0.1:${stack.config.http.port}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined,
      60_000,
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await receiver?.stop();
    await dns?.stop();
    await stack?.stop();
  });

  it("serves another app's recording and delivers its event promptly while one app's lookups hang", async () => {
    const stalled = await createTenant(admin, 'stalled');
    const healthy = await createTenant(admin, 'healthy');
    await stalled.client.post<WebhookSecretView>(`/v1/apps/${stalled.app.id}/webhook-secret`);
    receiver.secret = (await healthy.client.post<WebhookSecretView>(`/v1/apps/${healthy.app.id}/webhook-secret`)).body.secret;
    const goodUrl = receiver.url.replace('127.0.0.1', 'hooks.good.test');
    expect((await healthy.client.patch<AppView>(`/v1/apps/${healthy.app.id}`, { webhookUrl: goodUrl })).status).toBe(200);

    // The stalled app sets webhook URLs on names that never resolve (each is checked at once), ...
    const patches = await Promise.all(
      ['a', 'b', 'c', 'd', 'hooks'].map((label) =>
        stalled.client.patch<AppView>(`/v1/apps/${stalled.app.id}`, { webhookUrl: `http://${label}.hole.test:9/hooks` }),
      ),
    );
    expect(patches.map((p) => p.status)).toEqual([200, 200, 200, 200, 200]);
    expect(
      (await stalled.client.patch<AppView>(`/v1/apps/${stalled.app.id}`, { webhookUrl: 'http://hooks.hole.test:9/hooks' })).status,
    ).toBe(200);
    // ... and has events to deliver there.
    for (let i = 0; i < 8; i += 1) {
      const stream = await createStream(stalled.client, stalled.app.id, `s${i}`);
      await stalled.client.delete<StreamView>(`/v1/apps/${stalled.app.id}/streams/${stream.id}`);
    }
    await waitFor('lookups of the black-holed name', () => Promise.resolve(dns.seen('hooks.hole.test') >= 2 ? true : undefined), 30_000);

    // The other app's recording downloads (file reads share the threadpool getaddrinfo runs on) ...
    const recording = await seedRecording(stack, healthy.app.id, (await createStream(healthy.client, healthy.app.id, 'rec')).id);
    const download = await fetch(`http://127.0.0.1:${stack.config.http.port}/v1/apps/${healthy.app.id}/recordings/${recording}/file`, {
      headers: { authorization: `Bearer ${healthy.key.key}` },
      signal: AbortSignal.timeout(PROMPT_MS),
    });
    expect([download.status, await download.text()]).toEqual([200, 'recorded bytes']);

    // ... and its event is delivered, its name resolved beside the stalled ones.
    const stream = await createStream(healthy.client, healthy.app.id, 'prompt');
    await healthy.client.delete<StreamView>(`/v1/apps/${healthy.app.id}/streams/${stream.id}`);
    const got = await waitFor('the healthy app’s event', () => Promise.resolve(receiver.of('stream.ended', stream.id)[0]), PROMPT_MS);
    expect(got.signatureValid).toBe(true);
  }, 120_000);
});

async function seedRecording(stack: TestStack, appId: string, streamId: string): Promise<string> {
  const prisma = createPrismaClient(stack.config.databaseUrl);
  try {
    const id = newId('rec');
    const location = `${appId}/${id}.mp4`;
    const path = join(stack.config.recordings.dir, location);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, 'recorded bytes');
    await prisma.recording.create({
      data: {
        id,
        appId,
        streamId,
        mode: 'track_composite',
        status: 'complete',
        reason: 'seeded',
        nodeId: stack.nodeId,
        storage: 'local',
        location,
      },
    });
    return id;
  } finally {
    await prisma.$disconnect();
  }
}

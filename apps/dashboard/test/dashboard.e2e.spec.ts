import { dispose } from '@livekit/rtc-node';
import type { AppView, ClusterSettings, NodeList, StreamToken, StreamView } from '@tally/contracts';
import { mediaNodeIp, waitFor } from '@tally/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from '../../api/test/api-harness.js';
import { joinAndPublish, type Publisher } from '@tally/testing/media';
import { alertText, launchChromium, openDashboard, screenshot, signIn, videoPlaying } from './browser.js';

describe('the dashboard in Chromium', () => {
  let sut: ApiHarness;
  let browser: Browser;
  let baseUrl: string;
  const publishers: Publisher[] = [];
  const pages: Page[] = [];

  const open = async (path?: string): Promise<Page> => {
    const page = await openDashboard(browser, baseUrl, path);
    pages.push(page);
    return page;
  };
  const streamRow = (page: Page, name: string) => page.getByRole('table', { name: 'Streams' }).getByRole('row').filter({ hasText: name });

  beforeAll(async () => {
    mediaNodeIp();
    // The address joining nodes would reach the origin's Redis at (install.sh --cluster-bind).
    sut = await startApiHarness({ TALLY_CLUSTER_REDIS_URL: 'redis://:cluster-secret@10.9.0.1:6379' });
    baseUrl = sut.anonymous.baseUrl;
    browser = await launchChromium();
  });
  afterEach(async () => {
    for (const page of pages.splice(0)) await page.context().close();
  });
  afterAll(async () => {
    for (const publisher of publishers) await publisher.stop();
    await browser?.close();
    await sut?.stop();
    await dispose();
  });

  it('is served at /dashboard: index revalidated, hashed assets cached for good, app routes fall back to the page', async () => {
    const index = await fetch(`${baseUrl}/dashboard/`);
    const html = await index.text();
    const asset = /\/dashboard\/assets\/[\w.-]+\.js/.exec(html)?.[0];
    const deepLink = await fetch(`${baseUrl}/dashboard/apps/app_0123456789abcdef/streams`);
    const cached = await fetch(baseUrl + asset!);
    const missing = await fetch(`${baseUrl}/dashboard/assets/missing-0000.js`);

    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(deepLink.status).toBe(200);
    expect(await deepLink.text()).toBe(html);
    expect(cached.status).toBe(200);
    expect(cached.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(missing.status).toBe(404);
  });

  it("signs an app key in to its own app's streams, with no app switcher, and explains a wrong key", async () => {
    const { app, key, client } = await createTenant(sut.admin, 'signin-co');
    await createStream(client, app.id, 'morning show');
    const page = await open();

    await signIn(page, 'tk_not-a-real-key');
    expect(await alertText(page, 'not accepted')).toContain('unknown or has been revoked');
    await signIn(page, key.key);
    expect(await alertText(page, 'app key')).toContain('also enter the id of its app');
    await signIn(page, key.key, app.id);

    await streamRow(page, 'morning show').waitFor();
    expect(await streamRow(page, 'morning show').textContent()).toContain('created');
    expect(page.url()).toBe(`${baseUrl}/dashboard/apps/${app.id}/streams`);
    expect(await page.getByLabel('Switch app').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Admin' }).count()).toBe(0);
    await page.reload();
    await streamRow(page, 'morning show').waitFor();
  });

  it("walks an app's pages with clear empty states, including features this server lacks", async () => {
    const { app, key, client } = await createTenant(sut.admin, 'empty-co');
    const ingressRoute = await client.get(`/v1/apps/${app.id}/ingresses`);
    const page = await open();
    await signIn(page, key.key, app.id);
    await page.getByText('No streams yet.').waitFor();
    await screenshot(page, 'streams-empty');

    await page.getByRole('link', { name: 'Recordings' }).click();
    await page.getByText('No recordings yet.').waitFor();
    await page.getByText('No live stream to record').waitFor();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('No deliveries yet.').waitFor();
    await page.getByRole('link', { name: 'Ingresses' }).click();
    await page.getByText(ingressRoute.status === 404 ? 'Ingresses are not available on this server.' : 'No ingresses yet.').waitFor();
    await screenshot(page, 'ingresses');
    await page.goto(`${baseUrl}/dashboard/apps/${app.id}/billing`);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();

    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('turns a stream live without a reload when a real client publishes, and plays it in <video>', async () => {
    const { app, key, client } = await createTenant(sut.admin, 'live-co');
    const page = await open();
    await signIn(page, key.key, app.id);
    await page.getByText('No streams yet.').waitFor();

    await page.getByLabel('Stream name').fill('launch party');
    await page.getByRole('button', { name: 'Create stream' }).click();
    const row = streamRow(page, 'launch party');
    await row.getByText('created', { exact: true }).waitFor();
    const streamId = (await row.getAttribute('data-stream-id'))!;
    const token = (await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${streamId}/tokens`, { identity: 'host', role: 'publisher' }))
      .body;
    publishers.push(await joinAndPublish(token.url, token.token));

    await row.getByText('live', { exact: true }).waitFor({ timeout: 30_000 });
    await waitFor('publisher count in the table', async () =>
      (await row.getByRole('cell').nth(1).textContent()) === '1' ? true : undefined,
    );
    await page.getByRole('button', { name: 'Watch launch party' }).click();
    const size = await videoPlaying(page, 'video[aria-label="Live video of launch party"]');

    expect(size).toEqual({ width: 320, height: 240 });
    await page.getByRole('status').filter({ hasText: 'Playing live.' }).waitFor();
    await screenshot(page, 'streams-live');
    await waitFor('the dashboard viewer counted', async () => {
      const s = (await client.get<StreamView>(`/v1/apps/${app.id}/streams/${streamId}`)).body;
      return s.participants === 2 ? s : undefined;
    });
  });

  it('renders a quota refusal as a sentence naming the resource', async () => {
    const { app, key, client } = await createTenant(sut.admin, 'tiny-co', { maxStreams: 1 });
    await createStream(client, app.id, 'the only one');
    const page = await open();
    await signIn(page, key.key, app.id);
    await streamRow(page, 'the only one').waitFor();

    await page.getByLabel('Stream name').fill('one too many');
    await page.getByRole('button', { name: 'Create stream' }).click();
    const refusal = await alertText(page, 'refused');

    expect(refusal).toBe(
      'Stream refused: app.streams is at its limit (1 of 1 in use). End something that uses it, or ask the operator to raise the limit.',
    );
    expect(await streamRow(page, 'one too many').count()).toBe(0);
    await screenshot(page, 'streams-quota-refused');

    await page.getByRole('link', { name: 'Quotas' }).click();
    const gauge = page.getByRole('group', { name: 'Streams quota' });
    await gauge.getByText('1 of 1').waitFor();
    expect(await gauge.textContent()).toContain('limit set by the operator');
    await screenshot(page, 'quotas-app');
  });

  it("keeps another app's data out of reach of an app key", async () => {
    const mine = await createTenant(sut.admin, 'mine-co');
    const theirs = await createTenant(sut.admin, 'theirs-co');
    const secret = await createStream(theirs.client, theirs.app.id, 'their secret show');
    const page = await open();
    await signIn(page, mine.key.key, mine.app.id);
    await page.getByText('No streams yet.').waitFor();

    await page.getByLabel('Stream id').fill(secret.id);
    await page.getByRole('button', { name: 'Open' }).click();
    const notFound = await alertText(page, 'not found');
    await page.goto(`${baseUrl}/dashboard/apps/${theirs.app.id}/streams`);
    const otherApp = await alertText(page, 'app not found');

    expect(notFound).toBe(`Stream ${secret.id} was not found in app ${mine.app.id}. It does not exist, or it belongs to another app.`);
    expect(otherApp).toBe('Loading streams failed: app not found.');
    expect(await page.getByText('their secret show').count()).toBe(0);
    expect(await page.getByLabel('Switch app').count()).toBe(0);
    await page.goto(`${baseUrl}/dashboard/admin`);
    expect(await alertText(page, 'admin key')).toContain(`opens app ${mine.app.id} only`);
  });

  it('shows the admin the nodes with their budgets and lets them drain and re-activate one', async () => {
    const { app } = await createTenant(sut.admin, 'operator-view-co');
    const nodeId = sut.stack.nodeId;
    const page = await open();
    await signIn(page, sut.stack.adminKey);

    const row = page.getByRole('table', { name: 'Nodes' }).getByRole('row').filter({ hasText: nodeId });
    await row.getByText('active', { exact: true }).waitFor();
    expect(await row.textContent()).toContain('8 cores, 8.0 GB, 1000 Mbps');
    expect(await page.getByLabel('Switch app').locator('option', { hasText: 'operator-view-co' }).count()).toBe(1);
    await screenshot(page, 'admin');

    await row.getByRole('button', { name: `Drain ${nodeId}` }).click();
    await row.getByText('draining', { exact: true }).waitFor();
    const drained = (await sut.admin.get<NodeList>('/v1/nodes')).body.items.find((n) => n.nodeId === nodeId);
    expect(drained?.status).toBe('draining');

    await page.getByLabel('For app').selectOption(app.id);
    await page.getByLabel('Workload').selectOption('stream');
    await page.getByRole('button', { name: 'Check' }).click();
    expect(await page.getByRole('status').filter({ hasText: 'would be' }).textContent()).toContain('would be refused');

    await row.getByRole('button', { name: `Activate ${nodeId}` }).click();
    await row.getByText('active', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Check' }).click();
    await page.getByRole('status').filter({ hasText: 'would be admitted' }).waitFor();

    await page.getByLabel('Switch app').selectOption(app.id);
    await page.getByRole('link', { name: 'Quotas' }).click();
    await page.getByRole('heading', { name: 'Node pool headroom' }).waitFor();
    await page.getByRole('group', { name: 'RAM quota', exact: true }).waitFor();
    const limitForm = page.getByRole('form', { name: 'Set a quota limit' });
    await limitForm.getByRole('combobox', { name: /^Quota/ }).selectOption('maxStreams');
    await limitForm.getByLabel('Limit (empty = default cap)').fill('5');
    await limitForm.getByRole('button', { name: 'Save limit' }).click();
    await page.getByRole('group', { name: 'Streams quota' }).getByText('0 of 5').waitFor();
    expect((await sut.admin.get<AppView>(`/v1/apps/${app.id}`)).body.explicitQuotas.maxStreams).toBe(5);

    const guaranteeForm = page.getByRole('form', { name: 'Set a quota guarantee' });
    await guaranteeForm.getByRole('combobox', { name: /^Quota/ }).selectOption('maxStreams');
    await guaranteeForm.getByLabel('Guarantee (empty = none)').fill('2');
    await guaranteeForm.getByRole('button', { name: 'Save guarantee' }).click();
    await page.getByRole('group', { name: 'Streams quota' }).getByText('2 guaranteed', { exact: false }).waitFor();
    await page.getByText('Guaranteed: 2 Streams', { exact: false }).waitFor();
    await page.getByRole('group', { name: 'Guaranteed network quota' }).waitFor();
    expect((await sut.admin.get<AppView>(`/v1/apps/${app.id}`)).body.guarantees.maxStreams).toBe(2);
    await screenshot(page, 'quotas-admin');
  });

  it("lets the operator set and clear an app's request rate, which the app's own quotas page shows", async () => {
    const { app, key } = await createTenant(sut.admin, 'rates-co');
    const defaults = (await sut.admin.get<AppView>(`/v1/apps/${app.id}`)).body.rateLimits;
    const admin = await open();
    await signIn(admin, sut.stack.adminKey);
    const appRow = admin.getByRole('table', { name: 'Apps', exact: true }).getByRole('row').filter({ hasText: app.id });
    await appRow.getByRole('button', { name: 'Edit request rates of rates-co' }).click();
    const form = admin.getByRole('form', { name: 'Request rates of rates-co' });
    const requests = form.getByLabel('Requests per minute (empty = default)');

    await requests.fill('0');
    await form.getByRole('button', { name: 'Save rates' }).click();
    const invalid = form.locator('#rate-error-requestsPerMinute');
    await invalid.waitFor();
    expect(await invalid.textContent()).toMatch(/>=\s*1/);
    expect(await requests.getAttribute('aria-describedby')).toBe('rate-error-requestsPerMinute');
    expect((await sut.admin.get<AppView>(`/v1/apps/${app.id}`)).body.rateLimits.explicit).toEqual({});

    await requests.fill('1200');
    await form.getByRole('button', { name: 'Save rates' }).click();
    await form.getByRole('status').filter({ hasText: 'requests 1200 per minute, set by the operator' }).waitFor();
    // The form answers from the PATCH; the apps table follows once its list is fetched again.
    await appRow.filter({ hasText: 'Requests: 1200 per minute, set by the operator' }).waitFor();
    expect(await form.locator('.field-error').count()).toBe(0);
    await screenshot(admin, 'rates-admin');

    const own = await open();
    await signIn(own, key.key, app.id);
    await own.getByRole('link', { name: 'Quotas' }).click();
    const rates = own.getByRole('table', { name: 'Request rates' });
    const requestsRow = rates.getByRole('row').filter({ hasText: /^Requests/ });
    await requestsRow.getByText('1200 per minute').waitFor();
    expect(await requestsRow.textContent()).toContain('the operator');
    const startsRow = rates.getByRole('row').filter({ hasText: /^Starts/ });
    expect(await startsRow.textContent()).toContain(`${defaults.startsPerMinute} per minute`);
    expect(await startsRow.textContent()).toContain('default');
    expect(await own.getByText('The operator sets these rates.').count()).toBe(1);
    expect(await own.getByRole('form', { name: /Request rates/ }).count()).toBe(0);
    await screenshot(own, 'rates-app');

    await requests.fill('');
    await form.getByRole('button', { name: 'Save rates' }).click();
    await form
      .getByRole('status')
      .filter({ hasText: `requests ${defaults.requestsPerMinute} per minute, default` })
      .waitFor();
    await requestsRow.getByText(`${defaults.requestsPerMinute} per minute`).waitFor();
    expect(await requestsRow.textContent()).toContain('default');
    expect((await sut.admin.get<AppView>(`/v1/apps/${app.id}`)).body.rateLimits.explicit).toEqual({});
  });

  it('gives the admin a one-time join token and the exact install.sh command for the role and name chosen', async () => {
    const page = await open();
    await signIn(page, sut.stack.adminKey);
    const form = page.getByRole('form', { name: 'Add a node' });

    await form.getByLabel('Role').selectOption('gpu');
    await form.getByLabel('Node name').fill('gpu-1');
    await form.getByRole('button', { name: 'Create join token' }).click();

    const command = (await page.getByRole('status', { name: 'Join command' }).locator('code').textContent()) ?? '';
    expect(command).toMatch(new RegExp(`^\\./install\\.sh --join ${sut.anonymous.baseUrl} --token tjt_\\S+ --role gpu --name gpu-1$`));
    await screenshot(page, 'join-node');
    const token = /--token (\S+)/.exec(command)?.[1] ?? '';
    const joined = await sut.anonymous.post<ClusterSettings>('/v1/nodes/join', { token, name: 'gpu-1', role: 'gpu' });
    expect(joined.status).toBe(200);
    // The node's own Redis user, on the address the origin hands out.
    expect(joined.body.redisUrl).toMatch(/^redis:\/\/tally-node-gpu-1:[A-Za-z0-9_-]{43}@10\.9\.0\.1:6379$/);
    expect((await sut.anonymous.post('/v1/nodes/join', { token, name: 'gpu-2', role: 'gpu' })).status).toBe(401);
    await page.reload();
    await page.getByRole('form', { name: 'Add a node' }).waitFor();
    expect(await page.getByRole('status', { name: 'Join command' }).count()).toBe(0);
  });
});

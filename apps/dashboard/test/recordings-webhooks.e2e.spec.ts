import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dispose } from '@livekit/rtc-node';
import type { AppView, RecordingView, StreamToken, StreamView, WebhookEndpointView } from '@tally/contracts';
import { createPrismaClient } from '@tally/db';
import { type ApiClient, type Child, mediaNodeIp, startAppProcess, waitFor } from '@tally/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from '../../api/test/api-harness.js';
import { joinAndPublish, type Publisher } from '@tally/testing/media';
import { SignedReceiver } from '../../api/test/signed-receiver.js';
import { formatBytes, formatDuration } from '../src/format.js';
import { alertText, launchChromium, openDashboard, screenshot, signIn, videoPlaying } from './browser.js';

describe('recordings and webhooks in the dashboard', () => {
  let sut: ApiHarness;
  let worker: Child;
  let browser: Browser;
  const publishers: Publisher[] = [];
  const pages: Page[] = [];

  beforeAll(async () => {
    mediaNodeIp();
    sut = await startApiHarness({}, { egress: true });
    // The worker finalises recordings (probe, checksum, move) after egress closes the file.
    worker = await startAppProcess('worker', sut.stack.env, join(tmpdir(), `tally-worker-dashboard-${Date.now()}.log`));
    browser = await launchChromium();
  }, 180_000);
  afterEach(async () => {
    for (const page of pages.splice(0)) await page.context().close();
  });
  afterAll(async () => {
    await Promise.all(publishers.map((p) => p.stop()));
    await browser?.close();
    await worker?.stop();
    await sut?.stop();
    await dispose();
  });

  async function liveStream(client: ApiClient, appId: string, name: string): Promise<StreamView> {
    const stream = await createStream(client, appId, name);
    const token = (await client.post<StreamToken>(`/v1/apps/${appId}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' }))
      .body;
    publishers.push(await joinAndPublish(token.url, token.token));
    return waitFor('the stream live with its publisher', async () => {
      const s = (await client.get<StreamView>(`/v1/apps/${appId}/streams/${stream.id}`)).body;
      return s.status === 'live' && s.publishers === 1 ? s : undefined;
    });
  }

  async function appPage(key: string, appId: string, name: 'recordings' | 'webhooks', heading: string): Promise<Page> {
    const page = await openDashboard(browser, sut.anonymous.baseUrl, `/dashboard/apps/${appId}/${name}`);
    pages.push(page);
    await signIn(page, key, appId);
    await page.getByRole('heading', { name: heading }).waitFor();
    return page;
  }
  const recordingsPage = (key: string, appId: string): Promise<Page> => appPage(key, appId, 'recordings', 'Recordings');

  it('shows a recording refused by the app quota as a sentence naming app.recordings', async () => {
    const { app, key, client } = await createTenant(sut.admin, 'no-recordings-co');
    expect((await sut.admin.patch<AppView>(`/v1/apps/${app.id}`, { quotas: { maxRecordings: 0 } })).status).toBe(200);
    await liveStream(client, app.id, 'unrecordable');
    const page = await recordingsPage(key.key, app.id);

    await page.getByLabel('Live stream').locator('option', { hasText: 'unrecordable' }).waitFor({ state: 'attached' });
    await page.getByRole('button', { name: 'Start recording' }).click();

    expect(await alertText(page, 'refused')).toBe(
      'Recording refused: app.recordings is at its limit (0 of 0 in use). End something that uses it, or ask the operator to raise the limit.',
    );
    expect((await client.get<{ items: RecordingView[] }>(`/v1/apps/${app.id}/recordings`)).body.items).toEqual([]);
  });

  it(
    'starts a track-composite recording of a live stream, stops it, plays the file, downloads it and deletes it',
    { timeout: 240_000 },
    async () => {
      const { app, key, client } = await createTenant(sut.admin, 'recording-co');
      await liveStream(client, app.id, 'keynote');
      const page = await recordingsPage(key.key, app.id);
      await page.getByText('No recordings yet.').waitFor();

      await page.getByLabel('Live stream').locator('option', { hasText: 'keynote' }).waitFor({ state: 'attached' });
      await page.getByLabel('Mode').selectOption('track_composite');
      await page.getByRole('button', { name: 'Start recording' }).click();
      const started = await page
        .getByRole('status')
        .filter({ hasText: /Recording rec_\w+ is/ })
        .textContent();
      const recordingId = /rec_[a-z0-9]{16}/.exec(started ?? '')![0];
      const row = page.locator(`tr[data-recording-id="${recordingId}"]`);
      await row.getByText('active', { exact: true }).waitFor({ timeout: 60_000 });
      expect(await row.textContent()).toContain('track composite');
      await screenshot(page, 'recordings-active');

      await new Promise((r) => setTimeout(r, 5_000));
      await row.getByRole('button', { name: `Stop recording ${recordingId}` }).click();
      await row.getByText('complete', { exact: true }).waitFor({ timeout: 90_000 });
      const complete = (await client.get<RecordingView>(`/v1/apps/${app.id}/recordings/${recordingId}`)).body;
      const shown = await row.textContent();
      expect(complete.durationS).toBeGreaterThan(4);
      expect(shown).toContain(formatDuration(complete.durationS));
      expect(shown).toContain(formatBytes(complete.sizeBytes));

      await row.getByRole('button', { name: `Play recording ${recordingId}` }).click();
      // Egress transcodes track-composite output to its own preset size; any decoded frame proves playback.
      const played = await videoPlaying(page, `video[aria-label="Recording ${recordingId}"]`);
      expect(played.width * played.height).toBeGreaterThan(0);
      await screenshot(page, 'recordings-playback');

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        row.getByRole('button', { name: `Download recording ${recordingId}` }).click(),
      ]);
      const saved = join(tmpdir(), `dashboard-${recordingId}.mp4`);
      await download.saveAs(saved);
      expect(download.suggestedFilename()).toBe(`${recordingId}.mp4`);
      expect(statSync(saved).size).toBe(complete.sizeBytes);

      await row.getByRole('button', { name: `Delete recording ${recordingId}` }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Recording ${recordingId} deleted.` })
        .waitFor();
      await row.waitFor({ state: 'detached' });
      expect((await client.get(`/v1/apps/${app.id}/recordings/${recordingId}`)).status).toBe(404);
    },
  );

  it('saves webhook settings with an app key, shows a rotated secret once, and redelivers from the log', async () => {
    const receiver = await SignedReceiver.start();
    try {
      const { app, key, client } = await createTenant(sut.admin, 'webhook-co');
      const page = await appPage(key.key, app.id, 'webhooks', 'Webhooks and recording settings');
      await page.getByText('No deliveries yet.').waitFor();

      await page.getByLabel('Webhook URL').fill(receiver.url);
      await page.getByLabel('Fall back to a cheaper mode').check();
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      receiver.secret = (await page.getByLabel('New webhook secret').textContent()) ?? '';
      const saved = (await client.get<AppView>(`/v1/apps/${app.id}`)).body;

      expect(saved).toMatchObject({ webhookUrl: receiver.url, recordingFallback: true, recordingMode: 'auto', webhookSecretSet: true });
      expect(receiver.secret.length).toBeGreaterThan(20);
      await page.getByText('A secret is set.').waitFor();
      await page.getByRole('status', { name: 'Endpoint state' }).getByText('Healthy.').waitFor();

      const stream = await liveStream(client, app.id, 'hooked');
      const deliveries = page.getByRole('table', { name: 'Webhook deliveries' }).getByRole('row').filter({ hasText: 'stream.live' });
      await deliveries.getByText('delivered', { exact: true }).waitFor({ timeout: 30_000 });
      expect(receiver.of('stream.live', stream.id).map((e) => e.signatureValid)).toEqual([true]);
      await screenshot(page, 'webhooks');

      await deliveries.getByRole('button', { name: /^Redeliver stream\.live/ }).click();
      await page.getByRole('status').filter({ hasText: 'queued for delivery again' }).waitFor();
      await waitFor('the redelivery listed', async () => ((await deliveries.count()) === 2 ? true : undefined));
      await waitFor('the event received twice', () => Promise.resolve(receiver.deliveries >= 2 ? true : undefined));
      expect(receiver.of('stream.live', stream.id)).toHaveLength(1);
    } finally {
      await receiver.stop();
    }
  });

  it('shows a disabled endpoint, why, and re-enables it', async () => {
    const { app, key, client } = await createTenant(sut.admin, 'gone-co');
    // The worker disables an endpoint that answered 410 (apps/api/test/webhooks-health.e2e.spec.ts); here the page shows it.
    const prisma = createPrismaClient(sut.stack.config.databaseUrl);
    try {
      await prisma.app.update({ where: { id: app.id }, data: { webhookDisabledAt: new Date(), webhookDisabledReason: 'gone' } });
    } finally {
      await prisma.$disconnect();
    }
    const page = await appPage(key.key, app.id, 'webhooks', 'Webhooks and recording settings');
    const state = page.getByRole('status', { name: 'Endpoint state' });
    await state.getByText('the receiver answered 410 Gone', { exact: false }).waitFor();
    await screenshot(page, 'webhooks-disabled');

    await state.getByRole('button', { name: 'Re-enable endpoint' }).click();
    await state.getByText('Healthy.').waitFor();
    expect((await client.get<WebhookEndpointView>(`/v1/apps/${app.id}/webhook-endpoint`)).body).toMatchObject({
      status: 'enabled',
      disabledReason: null,
    });
  });
});

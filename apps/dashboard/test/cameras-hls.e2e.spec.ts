import type { CameraView } from '@tally/contracts';
import { waitFor } from '@tally/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from '../../api/test/api-harness.js';
import { generateJpegs, TestCamera, TestSocketViewer } from '@tally/testing/camera';
import { alertText, launchChromium, openDashboard, screenshot, signIn } from './browser.js';

type ImageLike = { complete: boolean; naturalWidth: number; naturalHeight: number; hidden: boolean; src: string };
type DocumentLike = { querySelector(selector: string): ImageLike | null };

describe('cameras and live HLS in the dashboard', () => {
  let sut: ApiHarness;
  let browser: Browser;
  let baseUrl: string;
  const pages: Page[] = [];
  const cleanups: (() => void)[] = [];

  const open = async (): Promise<Page> => {
    const page = await openDashboard(browser, baseUrl);
    pages.push(page);
    return page;
  };

  beforeAll(async () => {
    sut = await startApiHarness();
    baseUrl = sut.anonymous.baseUrl;
    browser = await launchChromium();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) cleanup();
    for (const page of pages.splice(0)) await page.context().close();
  });
  afterAll(async () => {
    await browser?.close();
    await sut?.stop();
  });

  it('creates a camera showing its key once, then lists it connected with a live preview and its viewer', async () => {
    const { app, key, client } = await createTenant(sut.admin, 'camera-co');
    const page = await open();
    await signIn(page, key.key, app.id);
    await page.getByRole('link', { name: 'Cameras' }).click();
    await page.getByText('No cameras yet.').waitFor();

    await page.getByLabel('Camera name').fill('loading dock');
    await page.getByLabel('Max fps').fill('4');
    await page.getByLabel('Max frame (KiB)').fill('32');
    await page.getByRole('button', { name: 'Create camera' }).click();
    const created = page.getByRole('status', { name: 'New camera' });
    const cameraKey = (await created.locator('code').filter({ hasText: /^ck_/ }).textContent()) ?? '';
    const ingestUrl = (await created.locator('dd.id').textContent()) ?? '';
    const row = page.getByRole('table', { name: 'Cameras' }).getByRole('row').filter({ hasText: 'loading dock' });
    await row.getByText('offline', { exact: true }).waitFor();
    const cameraId = (await row.getAttribute('data-camera-id'))!;

    expect(cameraKey).toMatch(/^ck_/);
    expect(ingestUrl).toBe(`${baseUrl.replace('http', 'ws')}/v1/apps/${app.id}/cameras/${cameraId}/ingest`);
    expect(await row.textContent()).toContain('4 fps, 32 KiB');

    const camera = await TestCamera.connect(`${ingestUrl}?key=${encodeURIComponent(cameraKey)}`);
    const jpegs = await generateJpegs(8);
    let sending = true;
    cleanups.push(() => {
      sending = false;
      camera.close();
    });
    void (async () => {
      while (sending) await camera.sendAt(jpegs, 4);
    })();
    const viewer = await TestSocketViewer.connect(ingestUrl.replace(/\/ingest$/, '/ws'), { authorization: `Bearer ${key.key}` });
    cleanups.push(() => viewer.close());

    await row.getByText('connected', { exact: true }).waitFor();
    await waitFor('the viewer in the table', async () => ((await row.getByRole('cell').nth(3).textContent()) === '1' ? true : undefined));
    const preview = await page.waitForFunction(
      (id) => {
        const img = (globalThis as unknown as { document: DocumentLike }).document.querySelector(`tr[data-camera-id="${id}"] img`);
        return img && img.complete && !img.hidden && img.naturalWidth > 0
          ? { width: img.naturalWidth, height: img.naturalHeight, src: img.src }
          : false;
      },
      cameraId,
      { timeout: 30_000 },
    );
    const { width, height, src } = (await preview.jsonValue()) as { width: number; height: number; src: string };
    await screenshot(page, 'cameras');

    expect({ width, height }).toEqual({ width: 320, height: 240 });
    expect(src).toContain('token=cvt1.');
    expect(src).not.toContain(key.key);
    // The still preview is not a viewer: only the WebSocket viewer is counted.
    expect((await client.get<CameraView>(`/v1/apps/${app.id}/cameras/${cameraId}`)).body.viewers).toBe(1);

    await page.reload();
    await row.getByText('connected', { exact: true }).waitFor();
    expect(await page.getByText(cameraKey).count()).toBe(0);
  });

  it("shows a stream's HLS state and the API's refusal to start it while nothing is published", async () => {
    const { app, key, client } = await createTenant(sut.admin, 'hls-co');
    const stream = await createStream(client, app.id, 'town hall');
    const page = await open();
    await signIn(page, key.key, app.id);
    await page.getByLabel('Stream id').fill(stream.id);
    await page.getByRole('button', { name: 'Open' }).click();

    await page.getByRole('heading', { name: 'Live HLS' }).waitFor();
    await page.getByText('No HLS session for this stream.').waitFor();
    await page.getByRole('button', { name: 'Start HLS' }).click();
    const refusal = await alertText(page, 'Starting HLS');

    expect(refusal).toBe('Starting HLS failed: nothing is published in the stream yet.');
    expect((await client.get(`/v1/apps/${app.id}/streams/${stream.id}/hls`)).status).toBe(404);
    await screenshot(page, 'stream-hls');
  });
});

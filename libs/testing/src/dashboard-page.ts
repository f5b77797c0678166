import type { Browser, Page } from 'playwright-core';

// The dashboard as a user drives it, for its own e2e tests and the acceptance suite.

/** A fresh browser context (its own sessionStorage) on the sign-in page. */
export async function openDashboard(browser: Browser, baseUrl: string, path = '/dashboard/'): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(baseUrl + path);
  return page;
}

export async function signIn(page: Page, key: string, appId?: string): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page.getByLabel('App id').fill(appId ?? '');
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The text of the first visible alert once it contains `text`. */
export async function alertText(page: Page, text: string | RegExp): Promise<string> {
  const alert = page.getByRole('alert').filter({ hasText: text }).first();
  await alert.waitFor();
  return (await alert.textContent()) ?? '';
}

type VideoLike = { readyState: number; videoWidth: number; videoHeight: number; paused: boolean };
type DocumentLike = { querySelector(selector: string): VideoLike | null };

/** Resolves once the <video> matching `selector` is playing decoded frames. */
export async function videoPlaying(page: Page, selector: string, timeoutMs = 30_000): Promise<{ width: number; height: number }> {
  // These functions run in the page, where `document` exists; the test's own types are Node's.
  const handle = await page.waitForFunction(
    (sel) => {
      const video = (globalThis as unknown as { document: DocumentLike }).document.querySelector(sel);
      const playing = !!video && video.readyState >= 2 && video.videoWidth > 0 && !video.paused;
      return playing ? { width: video.videoWidth, height: video.videoHeight } : false;
    },
    selector,
    { timeout: timeoutMs },
  );
  return (await handle.jsonValue()) as { width: number; height: number };
}

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

const ARTIFACTS = join(import.meta.dirname, 'artifacts');

export { launchChromium } from '@tally/testing/browser';
export { alertText, openDashboard, signIn, videoPlaying } from '@tally/testing/dashboard';

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (apt-get install chromium); no browser download. */
const CHROMIUM = process.env['TALLY_CHROMIUM'] ?? '/usr/bin/chromium';

/** Headless Chromium for browser tests and benchmarks (fake camera and microphone, autoplay allowed). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium fonts-liberation (scripts/provision/system.sh does)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      '--allow-loopback-in-peer-connection',
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
}
export * from './firewalled-browser.js';
export * from './client-namespace.js';

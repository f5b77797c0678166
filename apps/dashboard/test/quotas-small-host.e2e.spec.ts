import type { AppView } from '@tally/contracts';
import { mediaNodeIp } from '@tally/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createTenant, startApiHarness } from '../../api/test/api-harness.js';
import { launchChromium, openDashboard, screenshot, signIn } from './browser.js';

/** A 2 vCPU host: it runs one Chrome recording and one ingress at a time. */
const SMALL_NODE = { TALLY_NODE_CPU_MILLICORES: '2000', TALLY_NODE_RAM_MB: '4096', TALLY_NODE_NIC_MBPS: '1000' } as const;

describe('the Quotas page of an app on a small host', () => {
  let sut: ApiHarness;
  let browser: Browser;
  let page: Page | undefined;

  beforeAll(async () => {
    mediaNodeIp();
    sut = await startApiHarness({ TALLY_RECORDING_RETENTION_DAYS: '7' }, { nodeBudget: SMALL_NODE });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await page?.context().close();
    await browser?.close();
    await sut?.stop();
  });

  it('gives a new app at least one of each class the node runs, and shows its storage used, cap and retention', async () => {
    const { app, key } = await createTenant(sut.admin, 'small-co');
    expect((await sut.admin.patch<AppView>(`/v1/apps/${app.id}`, { maxStorageMb: 50 })).status).toBe(200);
    page = await openDashboard(browser, sut.anonymous.baseUrl);
    await signIn(page, key.key, app.id);

    await page.getByRole('link', { name: 'Quotas' }).click();
    const composites = page.getByRole('group', { name: 'Room-composite recordings quota' });
    await composites.getByText(/^0 of \d+$/).waitFor();
    const ingresses = page.getByRole('group', { name: 'Ingresses quota' });
    await ingresses.getByText(/^0 of \d+$/).waitFor();
    await page.getByRole('group', { name: 'Storage quota' }).getByText('0 MB of 50 MB').waitFor();
    const retention = await page.getByLabel('Recording retention').textContent();
    await screenshot(page, 'quotas-small-host');

    const limitOf = async (gauge: typeof composites) => Number(/of (\d+)/.exec((await gauge.textContent()) ?? '')?.[1]);
    expect(await limitOf(composites)).toBeGreaterThanOrEqual(1);
    expect(await limitOf(ingresses)).toBeGreaterThanOrEqual(1);
    expect(retention).toContain('deleted 7 days after they end (operator default)');
  });
});

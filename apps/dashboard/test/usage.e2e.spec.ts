import type { AppMeteringView } from '@tally/contracts';
import { waitFor } from '@tally/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createStream, createTenant, startApiHarness } from '../../api/test/api-harness.js';
import { sendParticipantEvent } from '../../api/test/livekit-webhook-sender.js';
import { launchChromium, openDashboard, screenshot, signIn } from './browser.js';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** What the page's elements offer to code run in the page (the test's own types are Node's). */
type ElementLike = { getAttribute(name: string): string | null };
/** Runs in the page (so it takes the name as an argument, not from a closure). */
const attributeOf = (elements: unknown[], name: string) => (elements as ElementLike[]).map((e) => e.getAttribute(name));

describe('the Usage page in Chromium', () => {
  let sut: ApiHarness;
  let browser: Browser;
  const pages: Page[] = [];
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;

  /** One person in the app's room from `daysAgo` days before today 10:00 UTC, for `minutes`: LiveKit's own signed join and leave. */
  const attend = async (appId: string, streamId: string, who: { sid: string; canPublish: boolean }, daysAgo: number, minutes: number) => {
    const joinedAt = new Date(today - daysAgo * DAY_MS + 10 * 60 * MINUTE_MS);
    const leftAt = new Date(joinedAt.getTime() + minutes * MINUTE_MS);
    const base = { room: `${appId}.${streamId}`, sid: who.sid, identity: who.sid, canPublish: who.canPublish, joinedAt };
    for (const e of [
      { ...base, id: `EV_${who.sid}_j`, event: 'participant_joined', createdAt: joinedAt },
      { ...base, id: `EV_${who.sid}_l`, event: 'participant_left', createdAt: leftAt },
    ] as const) {
      expect(await sendParticipantEvent(sut.anonymous.baseUrl, sut.stack.config.livekit, e)).toBe(200);
    }
  };
  const open = async (): Promise<Page> => {
    const page = await openDashboard(browser, sut.anonymous.baseUrl);
    pages.push(page);
    return page;
  };

  beforeAll(async () => {
    sut = await startApiHarness();
    browser = await launchChromium();
  });
  afterEach(async () => {
    for (const page of pages.splice(0)) await page.context().close();
  });
  afterAll(async () => {
    await browser?.close();
    await sut?.stop();
  });

  it("charts an app's meters per day for 30 days and totals them; the admin sees the apps that used most", async () => {
    const busy = await createTenant(sut.admin, 'busy-co');
    const quiet = await createTenant(sut.admin, 'quiet-co');
    const busyStream = await createStream(busy.client, busy.app.id, 'daily show');
    const quietStream = await createStream(quiet.client, quiet.app.id, 'rare show');
    await attend(busy.app.id, busyStream.id, { sid: 'PA_host20', canPublish: true }, 20, 30);
    await attend(busy.app.id, busyStream.id, { sid: 'PA_host05', canPublish: true }, 5, 45);
    await attend(busy.app.id, busyStream.id, { sid: 'PA_fan05', canPublish: false }, 5, 10);
    await attend(busy.app.id, busyStream.id, { sid: 'PA_host01', canPublish: true }, 1, 50);
    await attend(quiet.app.id, quietStream.id, { sid: 'PA_solo03', canPublish: true }, 3, 5);
    // An hour more than 30 days ago is outside the page's days.
    await attend(busy.app.id, busyStream.id, { sid: 'PA_host40', canPublish: true }, 40, 60);

    const page = await open();
    await signIn(page, busy.key.key, busy.app.id);
    await page.getByRole('link', { name: 'Usage' }).click();
    const totals = page.getByRole('table', { name: 'Usage totals' });
    const participants = totals.getByRole('row', { name: /^Participant minutes/ });
    await participants.getByText('135.0', { exact: true }).waitFor();
    expect(await participants.textContent()).toContain('Publishers 125.0 · Subscribers 10.0');
    expect(
      await totals
        .getByRole('row', { name: /^Recording minutes/ })
        .getByRole('cell')
        .first()
        .textContent(),
    ).toBe('0.0');

    // One dot per day; each names its day and value: the three days with a publisher are the only ones above 0.
    const chart = page.getByRole('figure', { name: 'Participant minutes per day' });
    const publisherDots = chart.locator('circle[data-series="Publishers"]');
    await waitFor('the chart to draw its days', async () => ((await publisherDots.count()) > 0 ? true : undefined));
    expect(await publisherDots.count()).toBe(30);
    // Each leave counts to the middle of its whole second (LiveKit's time), half a second more: the chart's tenths.
    const values = (await publisherDots.evaluateAll(attributeOf, 'data-value')).map((v) => Number(Number(v).toFixed(1)));
    expect(values.map((v, day) => [day, v]).filter(([, v]) => v !== 0)).toEqual([
      [9, 30],
      [24, 45],
      [28, 50],
    ]);
    const heights = (await publisherDots.evaluateAll(attributeOf, 'cy')).map(Number);
    expect(heights[28]).toBeLessThan(heights[24]!);
    expect(heights[24]).toBeLessThan(heights[0]!);
    expect(await chart.locator('circle[data-series="Subscribers"]').count()).toBe(30);
    expect(await page.getByRole('figure').count()).toBe(10);
    expect(await totals.getByRole('row', { name: /^Ladder minutes/ }).textContent()).toContain('GPU 0.0 · CPU 0.0');
    expect(
      await totals
        .getByRole('row', { name: /^HLS served/ })
        .getByRole('cell')
        .first()
        .textContent(),
    ).toBe('0.000');
    expect(await page.getByRole('alert').count()).toBe(0);
    await screenshot(page, 'usage');

    // The page shows what the API bills for the same days.
    const from = new Date(today - 29 * DAY_MS).toISOString();
    const to = new Date(today + DAY_MS).toISOString();
    const billed = (await busy.client.get<AppMeteringView>(`/v1/apps/${busy.app.id}/metering?from=${from}&to=${to}`)).body;
    expect(billed.participantMinutes).toBeCloseTo(135 + (4 * 0.5) / 60, 6);
    expect(billed.buckets).toHaveLength(30);

    const admin = await open();
    await signIn(admin, sut.stack.adminKey);
    const top = admin.getByRole('table', { name: 'Top apps by usage' });
    await top.getByRole('row', { name: /quiet-co/ }).waitFor();
    const rows = await top.locator('tbody tr').evaluateAll(attributeOf, 'data-app-id');
    expect(rows).toEqual([busy.app.id, quiet.app.id]);
    expect(
      await top
        .getByRole('row', { name: /busy-co/ })
        .getByRole('cell')
        .first()
        .textContent(),
    ).toBe('135.0');
    expect(
      await top
        .getByRole('row', { name: /quiet-co/ })
        .getByRole('cell')
        .first()
        .textContent(),
    ).toBe('5.0');
    await screenshot(admin, 'admin-top-apps');
  });
});

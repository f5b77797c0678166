import { randomBytes } from 'node:crypto';
import type { Config } from '@tally/config';
import { type AttemptResult, type DeliveryRequest, newWebhookSecret, sealSecret, type WebhookSender } from '@tally/webhooks';
import { describe, expect, it } from 'vitest';
import { Clock } from '../clock.js';
import type { EndpointHealthRepository } from './endpoint-health.repository.js';
import { WebhookDeliverer } from './webhook-deliverer.service.js';
import type { DeliveryToSend, WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';

const secretsKey = randomBytes(32);
const appId = 'app_deliverer0000000';
const config = {
  secretsKey,
  webhooks: { retryScheduleMs: [0, 5_000], disableAfterMs: 86_400_000, timeoutMs: 10_000 },
} as unknown as Config;

const delivery: DeliveryToSend = {
  id: 'dlv_deliverer0000000',
  appId,
  url: 'https://hooks.example.com/tally',
  attempts: 0,
  eventId: 'evt_deliverer0000000',
  eventType: 'stream.ended',
  body: '{"id":"evt_deliverer0000000"}',
  sealedSecret: sealSecret(secretsKey, newWebhookSecret(), appId),
  sealedPreviousSecret: null,
  previousSecretUntil: null,
  failingSince: null,
  disabledAt: null,
};

/** The receiver answers `result`; every write of an outcome hangs until `finishWrites` is called. */
function setup(result: AttemptResult) {
  const writes: string[] = [];
  let finishWrites: () => void = () => undefined;
  const written = new Promise<void>((resolve) => (finishWrites = resolve));
  const write = (what: string) => {
    writes.push(what);
    return written;
  };
  const deliveries = {
    recordDelivered: () => write('delivered'),
    recordFailed: () => write('failed'),
    recordAbandoned: () => write('abandoned'),
  } as unknown as WebhookDeliveriesRepository;
  const health = { markFailing: () => write('failing'), markHealthy: () => write('healthy') } as unknown as EndpointHealthRepository;
  const sent: DeliveryRequest[] = [];
  const sender = {
    attempt: (request: DeliveryRequest) => {
      sent.push(request);
      return Promise.resolve(result);
    },
  } as unknown as WebhookSender;
  return { deliverer: new WebhookDeliverer(deliveries, health, sender, new Clock(), config), writes, sent, finishWrites };
}

describe(WebhookDeliverer.name, () => {
  it.each([
    ['answered 2xx', { ok: true, statusCode: 204 } as const, 'delivered', { kind: 'delivered' }],
    ['failed', { ok: false, statusCode: 503, error: 'HTTP 503' } as const, 'failing', { kind: 'retry' }],
  ])('frees the slot as soon as the request %s, before its outcome is written', async (_, result, write, outcome) => {
    const { deliverer, writes, sent, finishWrites } = setup(result);
    let freed = 0;
    let settled = false;
    const delivering = deliverer
      .deliver(delivery, () => (freed += 1))
      .finally(() => {
        settled = true;
      });

    await expect.poll(() => freed).toBe(1);
    expect(sent).toHaveLength(1);
    // Its outcome is being written (the endpoint's health first on a failure): the attempt, and the row's lease, is not over.
    expect(writes).toContain(write);
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);

    finishWrites();
    await expect(delivering).resolves.toMatchObject(outcome);
    expect(freed).toBe(1);
  });

  it('frees the slot of a delivery to a disabled endpoint without sending it', async () => {
    const { deliverer, sent, finishWrites } = setup({ ok: true, statusCode: 204 });
    let freed = 0;
    const delivering = deliverer.deliver({ ...delivery, disabledAt: new Date() }, () => (freed += 1));
    await expect.poll(() => freed).toBe(1);
    finishWrites();
    await expect(delivering).resolves.toEqual({ kind: 'dead' });
    expect(sent).toHaveLength(0);
  });
});

import { randomUUID } from 'node:crypto';
import { AddressPolicy, newWebhookSecret, secretKey, WebhookResolver, WebhookSender } from '@tally/webhooks';
import type { VerifyingReceiver } from './receiver.js';

/**
 * The baseline: Node POSTing signed bodies like an event's to the same receiver in a loop,
 * `concurrency` at a time, through the worker's own sender (`WebhookSender`: the same undici agent
 * with keep-alive connections, the same Standard Webhooks signature and headers, the same address
 * check and attempt timeout). No database, no dispatcher: the ceiling the outbox is compared with.
 */
export async function bareLoop(
  receiver: VerifyingReceiver,
  body: (id: string) => string,
  count: number,
  concurrency: number,
): Promise<{ perSecond: number }> {
  const secret = newWebhookSecret();
  const keys = [secretKey(secret)];
  const url = receiver.url('/bare', secret);
  const sender = new WebhookSender(new AddressPolicy(['127.0.0.0/8']), new WebhookResolver());
  let next = 0;
  const started = performance.now();
  const loop = async () => {
    while (next < count) {
      next += 1;
      const eventId = `evt_${randomUUID()}`;
      const result = await sender.attempt({
        appId: 'app_bench',
        url,
        body: body(eventId),
        keys,
        eventId,
        eventType: 'stream.ended',
        deliveryId: `dlv_${randomUUID()}`,
        timeoutMs: 10_000,
        nowS: Math.floor(Date.now() / 1000),
      });
      if (!result.ok) throw new Error(`bare loop: ${result.error}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const seconds = (performance.now() - started) / 1000;
  await sender.close();
  return { perSecond: count / seconds };
}

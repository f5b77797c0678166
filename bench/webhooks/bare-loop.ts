import { randomUUID } from 'node:crypto';
import { newWebhookSecret, secretKey, signatureHeader } from '@tally/webhooks';
import { Agent, request } from 'undici';
import type { VerifyingReceiver } from './receiver.js';

/**
 * The baseline: Node signing (the same Standard Webhooks signature) and POSTing a body like an event's
 * to the same receiver in a loop, `concurrency` at a time, over keep-alive connections. No database,
 * no queue: the ceiling the outbox is compared with.
 */
export async function bareLoop(
  receiver: VerifyingReceiver,
  body: string,
  count: number,
  concurrency: number,
): Promise<{ perSecond: number }> {
  const secret = newWebhookSecret();
  const keys = [secretKey(secret)];
  const url = receiver.url('/bare', secret);
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  let next = 0;
  const started = performance.now();
  const loop = async () => {
    while (next < count) {
      next += 1;
      const id = `msg_${randomUUID()}`;
      const nowS = Math.floor(Date.now() / 1000);
      const response = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(nowS),
          'webhook-signature': signatureHeader(keys, id, nowS, body),
        },
        body,
      });
      await response.body.dump();
      if (response.statusCode !== 204) throw new Error(`bare loop: receiver answered ${response.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return { perSecond: count / seconds };
}

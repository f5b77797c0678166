import { Injectable } from '@nestjs/common';
import { secretKey, signatureHeader, WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '@tally/webhooks';

const TIMEOUT_MS = 10_000;

/** POSTs one signed CloudEvents batch to the operator's endpoint (an URL the operator configured, so no address policy). */
@Injectable()
export class UsageExportSender {
  /** Resolves on a 2xx; throws otherwise, so the hour is sent again at the next sweep. */
  async send(target: Readonly<{ url: string; secret: string }>, messageId: string, body: string, nowS: number): Promise<void> {
    const response = await fetch(target.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/cloudevents-batch+json',
        [WEBHOOK_ID_HEADER]: messageId,
        [WEBHOOK_TIMESTAMP_HEADER]: String(Math.floor(nowS)),
        [WEBHOOK_SIGNATURE_HEADER]: signatureHeader([secretKey(target.secret)], messageId, nowS, body),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await response.body?.cancel();
    if (response.status < 200 || response.status >= 300) throw new Error(`usage export answered HTTP ${response.status}`);
  }
}

import { signatureHeader, WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './signature.js';

export const USER_AGENT = 'Tally-Webhooks/1';

export type DeliveryRequest = Readonly<{
  url: string;
  /** The stored event JSON, sent byte for byte as signed. */
  body: string;
  /** HMAC keys to sign with: the current secret's, then during a rotation's grace period the previous one's. */
  keys: readonly Buffer[];
  /** Also the `webhook-id`: stable across retries and redeliveries, so receivers deduplicate on it. */
  eventId: string;
  eventType: string;
  deliveryId: string;
  timeoutMs: number;
  /** Signing time, unix seconds. */
  nowS: number;
}>;

export type AttemptResult = Readonly<{ ok: true; statusCode: number }> | Readonly<{ ok: false; statusCode: number | null; error: string }>;

const MAX_ERROR_LENGTH = 500;

/** One attempt: POST the signed body. Only a 2xx delivers; redirects are not followed. Never throws. */
export async function attemptDelivery(request: DeliveryRequest): Promise<AttemptResult> {
  try {
    const response = await fetch(request.url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(request.timeoutMs),
      headers: deliveryHeaders(request),
      body: request.body,
    });
    // The receiver's answer is not read, only released, so a huge or endless body cannot stall us.
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { ok: true, statusCode: response.status };
    return { ok: false, statusCode: response.status, error: `receiver answered ${response.status}` };
  } catch (error) {
    return { ok: false, statusCode: null, error: describeFailure(error, request.timeoutMs) };
  }
}

export function deliveryHeaders(request: DeliveryRequest): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    [WEBHOOK_ID_HEADER]: request.eventId,
    [WEBHOOK_TIMESTAMP_HEADER]: String(Math.floor(request.nowS)),
    [WEBHOOK_SIGNATURE_HEADER]: signatureHeader(request.keys, request.eventId, request.nowS, request.body),
    'Tally-Event-Type': request.eventType,
    'Tally-Delivery-Id': request.deliveryId,
  };
}

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer within ${timeoutMs} ms`;
  }
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  const message = error instanceof Error ? `${error.message}${cause}` : String(error);
  return message.slice(0, MAX_ERROR_LENGTH);
}

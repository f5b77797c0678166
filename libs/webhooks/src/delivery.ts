import { isIP } from 'node:net';
import { Agent, errors, request } from 'undici';
import { AddressNotAllowedError, AddressPolicy } from './address-policy.js';
import { LookupBusyError, UNCAPPED, type WebhookResolver } from './webhook-resolver.js';
import { signatureHeader, WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './signature.js';

export const USER_AGENT = 'Tally-Webhooks/1';

const VERDICT_CACHE_SIZE = 10_000;

export type DeliveryRequest = Readonly<{
  /** Whose delivery: the app's cap of host names in resolution applies. */
  appId: string;
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

/**
 * A failed attempt's cause, deliberately coarse: a receiver URL is chosen by the app, so the error
 * must not tell it what answered on the other side (a port scanner for the origin's network).
 */
export type AttemptError = 'timeout' | 'connection failed' | 'address not allowed' | `HTTP ${number}`;

export type AttemptResult =
  Readonly<{ ok: true; statusCode: number }> | Readonly<{ ok: false; statusCode: number | null; error: AttemptError }>;

/**
 * Sends deliveries over keep-alive connections to addresses the policy allows. A name is resolved
 * first within its app's lookup cap (WebhookResolver), then by the policy's lookup at connect time
 * from that answer, so the checked address is the connected one; an IP literal is checked before
 * the request. Redirects are never followed.
 */
export class WebhookSender {
  private readonly agent: Agent;
  /** URL → what is known before connecting: unparseable, an IP literal the policy refuses, or fine. */
  private readonly verdicts = new Map<string, 'connection failed' | 'address not allowed' | null>();

  constructor(
    private readonly policy: AddressPolicy,
    private readonly resolver: WebhookResolver,
  ) {
    this.agent = new Agent({ connect: { lookup: policy.lookup((host) => resolver.resolve(host, UNCAPPED)) }, keepAliveTimeout: 10_000 });
  }

  /** One attempt: POST the signed body; only a 2xx delivers. Never throws. */
  async attempt(delivery: DeliveryRequest): Promise<AttemptResult> {
    const refused = this.verdictOf(delivery.url);
    if (refused !== null) return { ok: false, statusCode: null, error: refused };
    try {
      await this.resolver.resolve(hostOf(delivery.url)!, delivery.appId);
      const response = await request(delivery.url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: deliveryHeaders(delivery),
        body: delivery.body,
        signal: AbortSignal.timeout(delivery.timeoutMs),
        headersTimeout: delivery.timeoutMs,
        bodyTimeout: delivery.timeoutMs,
      });
      // The answer's body is drained (up to a small limit) and dropped: only the status matters.
      await response.body.dump().catch(() => undefined);
      const { statusCode } = response;
      if (statusCode >= 200 && statusCode < 300) return { ok: true, statusCode };
      return { ok: false, statusCode, error: `HTTP ${statusCode}` };
    } catch (error) {
      return { ok: false, statusCode: null, error: coarse(error) };
    }
  }

  /**
   * Parsing a URL and checking an IP literal cost more than signing; the policy never changes, so
   * each URL's verdict is kept (a host name is checked at every connect, by the policy's lookup).
   */
  private verdictOf(url: string): 'connection failed' | 'address not allowed' | null {
    const known = this.verdicts.get(url);
    if (known !== undefined) return known;
    const host = hostOf(url);
    const verdict = host === undefined ? 'connection failed' : isIP(host) !== 0 && !this.policy.allows(host) ? 'address not allowed' : null;
    if (this.verdicts.size >= VERDICT_CACHE_SIZE) this.verdicts.clear();
    this.verdicts.set(url, verdict);
    return verdict;
  }

  async close(): Promise<void> {
    this.resolver.close();
    await this.agent.close();
  }
}

export function deliveryHeaders(request: DeliveryRequest): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [WEBHOOK_ID_HEADER]: request.eventId,
    [WEBHOOK_TIMESTAMP_HEADER]: String(Math.floor(request.nowS)),
    [WEBHOOK_SIGNATURE_HEADER]: signatureHeader(request.keys, request.eventId, request.nowS, request.body),
    'tally-event-type': request.eventType,
    'tally-delivery-id': request.deliveryId,
  };
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return undefined;
  }
}

function coarse(error: unknown): AttemptError {
  const causes: unknown[] = [error];
  for (let e = error; e instanceof Error && e.cause !== undefined; e = e.cause) causes.push(e.cause);
  if (causes.some((e) => e instanceof AddressNotAllowedError)) return 'address not allowed';
  if (causes.some((e) => e instanceof LookupBusyError || (e as NodeJS.ErrnoException | undefined)?.code === 'ETIMEOUT')) return 'timeout';
  const timedOut = causes.some(
    (e) =>
      e instanceof errors.HeadersTimeoutError ||
      e instanceof errors.BodyTimeoutError ||
      e instanceof errors.ConnectTimeoutError ||
      (e instanceof DOMException && (e.name === 'TimeoutError' || e.name === 'AbortError')),
  );
  return timedOut ? 'timeout' : 'connection failed';
}

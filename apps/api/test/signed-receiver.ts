import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookEventBody } from '@tally/contracts';
import { Webhook } from 'standardwebhooks';

export type ReceivedEvent = Readonly<{ body: WebhookEventBody; signatureValid: boolean }>;

/**
 * An app's webhook endpoint: checks each delivery's Standard Webhooks signature against the current
 * secret with the published `standardwebhooks` library and keeps events de-duplicated by id, as the
 * docs tell apps to.
 */
export class SignedReceiver {
  secret = '';
  /** Unique events by id, in arrival order. */
  readonly events: ReceivedEvent[] = [];
  deliveries = 0;
  /** While true every delivery is answered 503 (an app's endpoint that is down): events pile up in the sender's backlog. */
  refusing = false;
  /** Deliveries answered 2xx, per event id: an event delivered exactly once counts 1. */
  readonly accepted = new Map<string, number>();
  private readonly server: Server;

  private constructor() {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const signatureValid = verifies(this.secret, raw, request.headers);
        const body = JSON.parse(raw) as WebhookEventBody;
        this.deliveries += 1;
        if (this.refusing) {
          response.writeHead(503).end();
          return;
        }
        if (!this.events.some((e) => e.body.id === body.id)) this.events.push({ body, signatureValid });
        if (signatureValid) this.accepted.set(body.id, (this.accepted.get(body.id) ?? 0) + 1);
        response.writeHead(signatureValid ? 200 : 401).end();
      });
    });
  }

  /** Listens on HOST (loopback unless another host's sender must reach it). */
  static async start(host = '127.0.0.1'): Promise<SignedReceiver> {
    const receiver = new SignedReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, host, resolve));
    return receiver;
  }

  get url(): string {
    const { address, port } = this.server.address() as AddressInfo;
    return `http://${address}:${port}/hooks`;
  }

  of(type: string, resourceId?: string): ReceivedEvent[] {
    const idOf = (data: ReceivedEvent['body']['data']) => ('ingress' in data ? data.ingress.id : data.id);
    return this.events.filter((e) => e.body.type === type && (resourceId === undefined || idOf(e.body.data) === resourceId));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function verifies(secret: string, raw: string, headers: IncomingHttpHeaders): boolean {
  if (secret === '') return false;
  try {
    new Webhook(secret).verify(raw, headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

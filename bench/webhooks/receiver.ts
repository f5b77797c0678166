import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * An app's receiver on loopback: verifies every request with the published `standardwebhooks`
 * library (the app's secret, or the bare loop's), answers 401 to a bad one, and records when each
 * `webhook-id` first arrived and how often it came again.
 */
export class VerifyingReceiver {
  /** webhook-id → first receipt (ms since epoch). */
  readonly firstSeen = new Map<string, number>();
  duplicates = 0;
  refused = 0;
  requests = 0;
  private readonly verifiers = new Map<string, Webhook>();
  private server: Server | undefined;

  async start(): Promise<void> {
    this.server = createServer((request, response) => void this.handle(request, response));
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  /** A path whose requests are verified with `secret`. */
  url(path: string, secret: string): string {
    this.verifiers.set(path, new Webhook(secret));
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}${path}`;
  }

  /** Forgets what arrived (between the baseline and the outbox run). */
  reset(): void {
    this.firstSeen.clear();
    this.duplicates = 0;
    this.refused = 0;
    this.requests = 0;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const at = Date.now();
    this.requests += 1;
    const verifier = this.verifiers.get(request.url ?? '');
    try {
      if (!verifier) throw new Error('unknown path');
      verifier.verify(Buffer.concat(chunks).toString('utf8'), request.headers as Record<string, string>);
    } catch {
      this.refused += 1;
      return void response.writeHead(401).end();
    }
    const id = String(request.headers['webhook-id']);
    if (this.firstSeen.has(id)) this.duplicates += 1;
    else this.firstSeen.set(id, at);
    response.writeHead(204).end();
  }
}

import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type HoldMode = 'before-livekit' | 'after-livekit';

/**
 * Sits between an API process and LiveKit's HTTP API, passing everything through except egress start
 * calls, which it holds: `before-livekit` never lets LiveKit see the call, `after-livekit` lets
 * LiveKit start the egress and keeps its answer from the API. `held` resolves once a call is held,
 * the moment to kill the API.
 */
export class HoldingProxy {
  mode: HoldMode = 'before-livekit';
  private server: Server;
  private reached: (() => void) | undefined;

  private constructor(private readonly target: URL) {
    this.server = createServer((incoming, outgoing) => {
      const holds = incoming.url?.includes('/twirp/livekit.Egress/Start') ?? false;
      if (holds && this.mode === 'before-livekit') {
        this.reached?.();
        return;
      }
      const forwarded = request(
        { host: this.target.hostname, port: this.target.port, path: incoming.url, method: incoming.method, headers: incoming.headers },
        (answer) => {
          if (holds) {
            answer.resume();
            answer.once('end', () => this.reached?.());
            return;
          }
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forwarded.on('error', () => outgoing.destroy());
      incoming.pipe(forwarded);
    });
  }

  static async start(target: string): Promise<HoldingProxy> {
    const proxy = new HoldingProxy(new URL(target));
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves when the next egress start call is held. */
  held(): Promise<void> {
    return new Promise((resolve) => (this.reached = resolve));
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

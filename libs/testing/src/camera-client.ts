import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { WebSocket } from 'ws';

const run = promisify(execFile);

/** Real JPEGs from ffmpeg's test pattern, each different (a frame counter is burned in). */
export async function generateJpegs(count: number, size = '320x240'): Promise<Buffer[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-jpegs-'));
  try {
    await run('ffmpeg', [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      `testsrc=size=${size}:rate=8`,
      '-frames:v',
      String(count),
      '-q:v',
      '8',
      join(dir, 'f%04d.jpg'),
    ]);
    return readdirSync(dir)
      .sort()
      .map((f) => readFileSync(join(dir, f)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type Closed = Readonly<{ code: number; reason: string }>;

/** A camera as an ESP32 would be: one WebSocket, one JPEG per binary message. */
export class TestCamera {
  readonly closed: Promise<Closed>;

  private constructor(private readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  static async connect(url: string, headers: Record<string, string> = {}): Promise<TestCamera> {
    const ws = new WebSocket(url, { headers });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.once('error', reject);
    });
    return new TestCamera(ws);
  }

  send(frame: Buffer | string): Promise<void> {
    return new Promise((resolve, reject) => this.ws.send(frame, { binary: typeof frame !== 'string' }, (e) => (e ? reject(e) : resolve())));
  }

  /** Sends frames paced at `fps` until stopped. */
  async sendAt(frames: readonly Buffer[], fps: number): Promise<void> {
    for (const frame of frames) {
      if (this.ws.readyState !== WebSocket.OPEN) return;
      await this.send(frame);
      await new Promise((r) => setTimeout(r, 1000 / fps));
    }
  }

  close(): void {
    this.ws.close();
  }
}

/** A viewer on the camera's WebSocket: collects every binary message it receives. */
export class TestSocketViewer {
  readonly frames: Buffer[] = [];
  readonly closed: Promise<Closed>;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => this.frames.push(data));
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  /** Resolves with the viewer, or rejects with the HTTP status and body of a refused upgrade. */
  static connect(url: string, headers: Record<string, string> = {}): Promise<TestSocketViewer> {
    const ws = new WebSocket(url, { headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new TestSocketViewer(ws)));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => reject(new RefusedUpgrade(res.statusCode ?? 0, body)));
      });
      ws.once('error', reject);
    });
  }

  /** Viewers only receive; this is what a misbehaving one would send. */
  send(message: Buffer): void {
    this.ws.send(message, { binary: true });
  }

  close(): void {
    this.ws.close();
  }
}

export class RefusedUpgrade extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`upgrade refused: ${status} ${body}`);
  }
}

/** Reads a multipart/x-mixed-replace MJPEG response and collects each part's JPEG. */
export class TestMjpegViewer {
  readonly frames: Buffer[] = [];
  private pending = Buffer.alloc(0);
  readonly done: Promise<void>;

  private constructor(
    readonly response: Response,
    private readonly controller: AbortController,
  ) {
    const boundary = /boundary=([^;]+)/.exec(response.headers.get('content-type') ?? '')?.[1] ?? '';
    this.done = this.read(response, boundary).catch(() => {});
  }

  static async open(url: string, headers: Record<string, string> = {}): Promise<TestMjpegViewer> {
    const controller = new AbortController();
    const response = await fetch(url, { headers, signal: controller.signal });
    return new TestMjpegViewer(response, controller);
  }

  stop(): void {
    this.controller.abort();
  }

  private async read(response: Response, boundary: string): Promise<void> {
    if (!response.body) return;
    for await (const chunk of response.body) {
      this.pending = Buffer.concat([this.pending, Buffer.from(chunk as Uint8Array)]);
      for (;;) {
        const head = this.pending.indexOf('\r\n\r\n');
        if (head < 0 || !this.pending.subarray(0, head).toString().startsWith(`--${boundary}`)) break;
        const length = Number(/content-length: (\d+)/i.exec(this.pending.subarray(0, head).toString())?.[1]);
        const end = head + 4 + length + 2;
        if (this.pending.length < end) break;
        this.frames.push(Buffer.from(this.pending.subarray(head + 4, head + 4 + length)));
        this.pending = this.pending.subarray(end);
      }
    }
  }
}

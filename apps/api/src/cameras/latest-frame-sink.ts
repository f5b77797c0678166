/** Writes one frame; `done` runs once the transport took it (its buffers drained), with an error if it failed. */
export type FrameWriter = (frame: Buffer, done: (error?: Error) => void) => void;

/**
 * One viewer's end of the fan-out. At most one frame is in flight per viewer; frames that arrive
 * meanwhile are not queued: the viewer gets the newest one once the previous write drained, so a slow
 * viewer skips frames instead of buffering them, and every viewer writes the same shared Buffer.
 */
export class LatestFrameSink {
  private inFlight = false;
  private waiting: Buffer | undefined;
  private closed = false;
  /** Frames handed to the transport and frames skipped because the viewer was still busy. */
  sent = 0;
  skipped = 0;

  constructor(
    private readonly write: FrameWriter,
    private readonly onError: (error: Error) => void = () => {},
  ) {}

  offer(frame: Buffer): void {
    if (this.closed) return;
    if (this.inFlight) {
      if (this.waiting !== undefined) this.skipped += 1;
      this.waiting = frame;
      return;
    }
    this.send(frame);
  }

  close(): void {
    this.closed = true;
    this.waiting = undefined;
  }

  private send(frame: Buffer): void {
    this.inFlight = true;
    this.sent += 1;
    this.write(frame, (error) => {
      this.inFlight = false;
      if (error) {
        this.close();
        this.onError(error);
        return;
      }
      const next = this.waiting;
      this.waiting = undefined;
      if (next !== undefined && !this.closed) this.send(next);
    });
  }
}

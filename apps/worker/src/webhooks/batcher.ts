/**
 * Coalesces calls made while other work is in flight into one batch call (group commit): a call
 * waits up to `windowMs` for others to join it, and while `maxInFlight` batches are already
 * running, for one of them to finish; everything that arrived meanwhile goes in the next batch. So
 * the lanes' concurrent attempts share one database round trip per step (a round trip costs far
 * more CPU than a row: the bench's profile), at the price of a few milliseconds of latency. A
 * batch never holds more than `max` items; each caller gets its own result or its batch's error.
 */
/** An item waiting for its batch, with the settlement of its caller's promise. */
export type Waiting<I, O> = { item: I; resolve: (out: O) => void; reject: (error: unknown) => void };

export class Batcher<I, O> {
  private pending: Waiting<I, O>[] = [];
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly run: (items: readonly I[]) => Promise<readonly O[]>,
    private readonly max = 500,
    private readonly maxInFlight = 2,
    private readonly windowMs = 5,
  ) {}

  /** Resolves with the result of `item` once its batch has run. */
  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Takes every item still waiting for a batch, so another statement can carry them; the caller
   * settles each (resolve or reject). Batches already running are not touched.
   */
  takeWaiting(): Waiting<I, O>[] {
    return this.pending.splice(0);
  }

  private schedule(): void {
    if (this.scheduled || this.pending.length === 0 || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    const flush = () => {
      this.scheduled = false;
      this.flush();
    };
    if (this.pending.length >= this.max || this.windowMs === 0) setImmediate(flush);
    else setTimeout(flush, this.windowMs);
  }

  private flush(): void {
    if (this.inFlight >= this.maxInFlight) return;
    const batch = this.pending.splice(0, this.max);
    if (batch.length === 0) return;
    this.inFlight += 1;
    this.run(batch.map((b) => b.item))
      .then(
        (outs) => batch.forEach((b, i) => b.resolve(outs[i] as O)),
        (error: unknown) => batch.forEach((b) => b.reject(error)),
      )
      .finally(() => {
        this.inFlight -= 1;
        this.schedule();
      });
    this.schedule();
  }
}

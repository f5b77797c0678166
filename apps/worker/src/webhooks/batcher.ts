/**
 * Coalesces calls made while other work is in flight into one batch call: the first call of a
 * batch waits for the current turn of the event loop (setImmediate), so every lane's concurrent
 * attempts that reach the same step together share one database round trip. A batch never holds
 * more than `max` items; each caller gets its own result or its batch's error.
 */
export class Batcher<I, O> {
  private pending: { item: I; resolve: (out: O) => void; reject: (error: unknown) => void }[] = [];
  private scheduled = false;

  constructor(
    private readonly run: (items: readonly I[]) => Promise<readonly O[]>,
    private readonly max = 200,
  ) {}

  /** Resolves with the result of `item` once its batch has run. */
  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.max) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending.splice(0, this.max);
    if (this.pending.length > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    if (batch.length === 0) return;
    this.run(batch.map((b) => b.item)).then(
      (outs) => batch.forEach((b, i) => b.resolve(outs[i] as O)),
      (error: unknown) => batch.forEach((b) => b.reject(error)),
    );
  }
}

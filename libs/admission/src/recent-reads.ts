/**
 * Reads shared by concurrent callers and reused while younger than `maxAgeMs` and taken at the
 * caller's current `version` (a counter that moves when a reuse would be wrong); a failed read is
 * forgotten at once. Past `kept` entries, the stale ones are dropped before a new one is added.
 */
export class RecentReads<T> {
  private readonly reads = new Map<string, Readonly<{ readAt: number; version: number; value: Promise<T> }>>();

  constructor(
    private readonly maxAgeMs: number,
    private readonly kept: number,
    private readonly now: () => number,
  ) {}

  get(key: string, read: () => Promise<T>, version = 0): Promise<T> {
    const now = this.now();
    const recent = this.reads.get(key);
    if (recent && now - recent.readAt < this.maxAgeMs && recent.version === version) return recent.value;
    if (this.reads.size >= this.kept) {
      for (const [k, r] of this.reads) if (now - r.readAt >= this.maxAgeMs) this.reads.delete(k);
    }
    const value = read();
    this.reads.set(key, { readAt: now, version, value });
    value.catch(() => {
      if (this.reads.get(key)?.value === value) this.reads.delete(key);
    });
    return value;
  }
}

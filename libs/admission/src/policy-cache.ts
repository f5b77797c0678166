import type { AppQuotaPolicy } from '@tally/capacity';

/** Bounds memory on a platform with many apps; the oldest entry goes first. */
const MAX_ENTRIES = 10_000;
/** A backstop only: a policy change reaches every replica through the process's invalidation bus. */
const TTL_MS = 60_000;

/**
 * Apps' policies in process, for the admission routes (every admission reads its app's policy).
 * Serves only while `live()` says the invalidation bus is connected: messages missed while it was
 * down are unknown, so its owner calls `forgetAll()` on reconnect. A read that raced an
 * invalidation is not remembered.
 */
export class PolicyCache {
  private readonly entries = new Map<string, { policy: AppQuotaPolicy; expiresAt: number }>();
  private generation = 0;

  constructor(
    private readonly live: () => boolean,
    private readonly now: () => number = Date.now,
  ) {}

  get(appId: string): AppQuotaPolicy | undefined {
    if (!this.live()) return undefined;
    const hit = this.entries.get(appId);
    return hit && hit.expiresAt > this.now() ? hit.policy : undefined;
  }

  /** The token to hand back to `remember` with what was read after taking it. */
  begin(): number {
    return this.generation;
  }

  remember(appId: string, policy: AppQuotaPolicy, generation: number): void {
    if (generation !== this.generation || !this.live()) return;
    this.entries.delete(appId);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(appId, { policy, expiresAt: this.now() + TTL_MS });
  }

  forget(appId: string): void {
    this.generation += 1;
    this.entries.delete(appId);
  }

  forgetAll(): void {
    this.generation += 1;
    this.entries.clear();
  }
}

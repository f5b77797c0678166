/** What the shared counter answered: how many units it granted, the window's total after, and the window's remaining life. */
export type Grant = Readonly<{ granted: number; used: number; ttlMs: number }>;

/**
 * The shared fixed-window counters (Redis, shared by every API replica): one atomic "add up to
 * `want` to this window's count without passing `max`" per call, starting a window of `windowMs`
 * when none is open.
 */
export type LeaseBackend = Readonly<{ lease(key: string, want: number, max: number, windowMs: number): Promise<Grant> }>;

/** A request counted: its position in the window (above `max` when refused) and when the window ends. */
export type Count = Readonly<{ current: number; ttlMs: number }>;

/** One replica's share of one window: units reserved in the shared counter and not yet spent. */
type Lease = {
  readonly max: number;
  windowEndsAt: number;
  /** The window's shared total as of this replica's last grant (its own and every other replica's). */
  used: number;
  left: number;
  /** The shared counter answered that the window is full: refuse locally until it ends. */
  full: boolean;
  refill: Promise<void> | undefined;
};

/** Larger leases would let one replica hold more of a window that other replicas then cannot use. */
const MAX_LEASE = 100;
/**
 * Windows tracked at most (one per app and budget is typical; one per client group for failed
 * authentications). Entries are kept in the order their windows opened, so at the cap the oldest
 * one goes, in constant time whatever the number of distinct keys.
 */
export const MAX_WINDOWS = 10_000;

/**
 * The size of the leases of a window of `max` requests: 1 % of it, at least 1, at most MAX_LEASE. A
 * limit under 200 per window (every start budget, small request budgets) is counted one request per
 * round trip, exactly as a plain shared counter would.
 */
export function leaseSize(max: number): number {
  return Math.min(MAX_LEASE, Math.max(1, Math.floor(max / 100)));
}

/**
 * Fixed-window request counting shared by every API replica, without a Redis round trip per
 * request: a replica reserves units of a window from the shared counter in leases (`leaseSize`) and
 * spends them in process, asking for the next lease when one is spent (requests arriving meanwhile
 * wait for that one round trip together). The shared counter never grants past `max`, so the
 * replicas together never admit more than the limit; a replica may refuse while others still hold
 * unspent units, at most one lease each, which stay unused when the window ends. Once the counter
 * answers that the window is full, the replica refuses locally until the window ends, unless the
 * limit changes.
 */
export class LeasedCounter {
  private readonly leases = new Map<string, Lease>();

  constructor(
    private readonly backend: LeaseBackend,
    private readonly now: () => number = Date.now,
    private readonly maxWindows = MAX_WINDOWS,
  ) {}

  /** Counts one request; answers synchronously while this replica holds units of the window. */
  take(key: string, windowMs: number, max: number): Count | Promise<Count> {
    const now = this.now();
    let lease = this.leases.get(key);
    if (lease === undefined || lease.windowEndsAt <= now || lease.max !== max) {
      this.leases.delete(key);
      if (this.leases.size >= this.maxWindows) this.leases.delete(this.leases.keys().next().value!);
      lease = { max, windowEndsAt: now + windowMs, used: 0, left: 0, full: false, refill: undefined };
      this.leases.set(key, lease);
    }
    if (lease.left > 0) {
      lease.left -= 1;
      return { current: lease.used - lease.left, ttlMs: lease.windowEndsAt - now };
    }
    if (lease.full) return { current: max + 1, ttlMs: lease.windowEndsAt - now };
    return this.refill(key, lease, windowMs).then(() => this.take(key, windowMs, max));
  }

  /** One lease request per window in flight; everyone who ran out waits for it. */
  private refill(key: string, lease: Lease, windowMs: number): Promise<void> {
    lease.refill ??= this.backend.lease(key, leaseSize(lease.max), lease.max, windowMs).then(
      (grant) => {
        lease.refill = undefined;
        lease.left += grant.granted;
        lease.used = grant.used;
        lease.full = grant.granted === 0;
        lease.windowEndsAt = this.now() + grant.ttlMs;
      },
      (error: unknown) => {
        lease.refill = undefined;
        throw error;
      },
    );
    return lease.refill;
  }

  /** Windows tracked now (at most MAX_WINDOWS). */
  get size(): number {
    return this.leases.size;
  }
}

import type { CapacityLedger } from '@tally/admission';

export type LeaseLedger = Pick<CapacityLedger, 'renew'>;

/** One viewer this process serves: how to take its place again, and how to end it when that fails. */
export type HeldViewer = Readonly<{ readmit(): Promise<boolean>; end(): void }>;

/**
 * The camera viewers this process serves. Their reservations are leases: every third of the lease
 * all of them are renewed in one ledger call, so they stay held exactly while this process lives.
 * A lease that lapsed anyway (the process stalled, or Redis lost it) is taken again through
 * admission; a viewer that no longer fits is ended.
 */
export class ViewerLeases {
  private readonly live = new Map<string, HeldViewer>();
  private timer: NodeJS.Timeout | undefined;
  private renewing = false;

  constructor(
    private readonly ledger: LeaseLedger,
    readonly leaseMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  hold(id: string, viewer: HeldViewer): void {
    this.live.set(id, viewer);
  }

  /** True when the viewer was still held here. */
  drop(id: string): boolean {
    return this.live.delete(id);
  }

  holds(id: string): boolean {
    return this.live.has(id);
  }

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), Math.floor(this.leaseMs / 3));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Renews every held lease once; retakes (or ends) the viewers whose lease was gone. */
  async renew(): Promise<void> {
    const ids = [...this.live.keys()];
    if (ids.length === 0) return;
    for (const id of await this.ledger.renew(ids, this.leaseMs)) {
      const viewer = this.live.get(id);
      if (!viewer) continue;
      if (await viewer.readmit()) continue;
      if (this.live.delete(id)) viewer.end();
    }
  }

  /** A renewal still under way (a slow Redis) is not overlapped by the next one. */
  private async tick(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      await this.renew();
    } catch (error) {
      this.onError(error);
    } finally {
      this.renewing = false;
    }
  }
}

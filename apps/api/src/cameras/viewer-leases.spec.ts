import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type LeaseLedger, ViewerLeases } from './viewer-leases.js';

/** A ledger adapter that records each renewal and answers with the ids the test says are gone. */
class FakeLedger implements LeaseLedger {
  readonly calls: { ids: string[]; lapseAfterMs: number }[] = [];
  gone = new Set<string>();
  hang: Promise<void> | undefined;

  async renew(ids: readonly string[], lapseAfterMs: number): Promise<string[]> {
    this.calls.push({ ids: [...ids], lapseAfterMs });
    await this.hang;
    return ids.filter((id) => this.gone.has(id));
  }
}

const viewer = (fits: boolean) => ({ readmit: vi.fn(() => Promise.resolve(fits)), end: vi.fn() });

describe(ViewerLeases.name, () => {
  let ledger: FakeLedger;
  let errors: unknown[];
  let sut: ViewerLeases;

  beforeEach(() => {
    vi.useFakeTimers();
    ledger = new FakeLedger();
    errors = [];
    sut = new ViewerLeases(ledger, 9_000, (e) => errors.push(e));
  });
  afterEach(() => {
    sut.stop();
    vi.useRealTimers();
  });

  it('renews every held viewer in one call each third of the lease, and none once dropped', async () => {
    sut.hold('a', viewer(true));
    sut.hold('b', viewer(true));
    sut.start();

    await vi.advanceTimersByTimeAsync(9_000);

    expect(ledger.calls).toEqual([
      { ids: ['a', 'b'], lapseAfterMs: 9_000 },
      { ids: ['a', 'b'], lapseAfterMs: 9_000 },
      { ids: ['a', 'b'], lapseAfterMs: 9_000 },
    ]);
    expect(sut.drop('a')).toBe(true);
    expect(sut.drop('b')).toBe(true);
    expect(sut.drop('b')).toBe(false);
    await vi.advanceTimersByTimeAsync(9_000);
    expect(ledger.calls).toHaveLength(3);
  });

  it('takes a lapsed place again, and ends the viewer only when it no longer fits', async () => {
    const fits = viewer(true);
    const refused = viewer(false);
    const healthy = viewer(true);
    sut.hold('fits', fits);
    sut.hold('refused', refused);
    sut.hold('healthy', healthy);
    ledger.gone = new Set(['fits', 'refused']);

    await sut.renew();

    expect(fits.readmit).toHaveBeenCalledOnce();
    expect(fits.end).not.toHaveBeenCalled();
    expect(refused.end).toHaveBeenCalledOnce();
    expect(healthy.readmit).not.toHaveBeenCalled();
    expect([sut.holds('fits'), sut.holds('refused'), sut.holds('healthy')]).toEqual([true, false, true]);
  });

  it('does not retake the place of a viewer that left while its renewal was under way', async () => {
    const left = viewer(true);
    sut.hold('left', left);
    ledger.gone = new Set(['left']);
    let answer = () => {};
    ledger.hang = new Promise((resolve) => (answer = resolve));

    const renewing = sut.renew();
    sut.drop('left');
    answer();
    await renewing;

    expect(left.readmit).not.toHaveBeenCalled();
  });

  it('does not overlap a slow renewal, and keeps renewing after a failed one', async () => {
    sut.hold('a', viewer(true));
    let answer = () => {};
    ledger.hang = new Promise((resolve) => (answer = resolve));
    sut.start();

    await vi.advanceTimersByTimeAsync(9_000);
    expect(ledger.calls).toHaveLength(1);

    answer();
    ledger.hang = undefined;
    const failing = vi.spyOn(ledger, 'renew').mockRejectedValueOnce(new Error('redis down'));
    await vi.advanceTimersByTimeAsync(3_000);
    expect(errors).toEqual([new Error('redis down')]);
    failing.mockRestore();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(ledger.calls.at(-1)).toEqual({ ids: ['a'], lapseAfterMs: 9_000 });
    expect(ledger.calls).toHaveLength(2);
  });
});

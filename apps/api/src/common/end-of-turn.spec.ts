import { describe, expect, it } from 'vitest';
import { endOfTurn } from './end-of-turn.js';

describe(endOfTurn.name, () => {
  it('lets every caller of one turn go on together, after the turn’s I/O callbacks and before the next turn’s timers', async () => {
    // From a timer callback: this turn's check phase (setImmediate) comes before the next turn's timers.
    await new Promise((resolve) => setTimeout(resolve, 0));
    const order: string[] = [];
    const turn = [endOfTurn(), endOfTurn(), endOfTurn()];
    expect(new Set(turn).size).toBe(1);
    setTimeout(() => order.push('next turn'), 0);
    await Promise.all(turn.map((p, i) => p.then(() => order.push(`caller ${i}`))));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(order).toEqual(['caller 0', 'caller 1', 'caller 2', 'next turn']);
  });

  it('gives a caller after the turn ended a later turn’s end', async () => {
    const first = endOfTurn();
    await first;
    const second = endOfTurn();
    expect(second).not.toBe(first);
    await expect(second).resolves.toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { Batcher } from './batcher.js';

describe(Batcher.name, () => {
  it('runs calls made in the same turn as one batch, each caller getting its own result', async () => {
    const batches: number[][] = [];
    const sut = new Batcher<number, number>((items) => {
      batches.push([...items]);
      return Promise.resolve(items.map((i) => i * 10));
    });

    const results = await Promise.all([1, 2, 3].map((i) => sut.add(i)));

    expect(results).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('collects what arrives while a batch runs into the next one', async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const sut = new Batcher<number, number>(
      (items) => {
        batches.push([...items]);
        return batches.length === 1 ? new Promise((resolve) => (release = () => resolve([...items]))) : Promise.resolve([...items]);
      },
      500,
      1,
      0,
    );

    const first = sut.add(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [2, 3, 4].map((i) => sut.add(i));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1]]);
    release();

    await expect(Promise.all([first, ...later])).resolves.toEqual([1, 2, 3, 4]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('never puts more than max items in one batch', async () => {
    const batches: number[][] = [];
    const sut = new Batcher<number, number>(
      (items) => {
        batches.push([...items]);
        return Promise.resolve([...items]);
      },
      2,
      1,
    );

    await Promise.all([1, 2, 3, 4, 5].map((i) => sut.add(i)));

    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('rejects every caller of a failed batch, and the next batch runs again', async () => {
    let fail = true;
    const sut = new Batcher<number, number>((items) => (fail ? Promise.reject(new Error('database down')) : Promise.resolve([...items])));

    const failed = await Promise.allSettled([sut.add(1), sut.add(2)]);
    fail = false;

    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await expect(sut.add(3)).resolves.toBe(3);
  });

  it('hands the items still waiting to whoever takes them, and runs no batch for them', async () => {
    const batches: number[][] = [];
    const sut = new Batcher<number, number>((items) => {
      batches.push([...items]);
      return Promise.resolve([...items]);
    });

    const results = [1, 2].map((i) => sut.add(i));
    const taken = sut.takeWaiting();
    taken.forEach((w) => w.resolve(w.item * 100));

    await expect(Promise.all(results)).resolves.toEqual([100, 200]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(batches).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { GroupedWrites } from './grouped-writes.js';

/** A table at its adapter: each statement waits until the test lets it commit. */
function setup(maxRows = 100) {
  const committed: number[] = [];
  const statements: { rows: readonly number[]; commit: (error?: Error) => void }[] = [];
  const statement = (rows: readonly number[]) =>
    new Promise<void>((resolve, reject) => {
      statements.push({
        rows,
        commit: (error) => {
          if (error) return reject(error);
          committed.push(...rows);
          resolve();
        },
      });
    });
  const sut = new GroupedWrites<number>({
    writeMany: statement,
    writeOne: (row) => (row < 0 ? Promise.reject(new Error(`row ${row} refused`)) : statement([row])),
    maxRows,
  });
  return { sut, committed, statements };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe(GroupedWrites.name, () => {
  it('writes a lone row at once, and the rows asked for meanwhile together in the next statement', async () => {
    const t = setup();
    const first = t.sut.write(1);
    await settle();
    const others = [2, 3, 4].map((row) => t.sut.write(row));
    await settle();
    expect(t.statements.map((s) => s.rows)).toEqual([[1]]);

    t.statements[0]!.commit();
    await first;
    await settle();
    expect(t.statements.map((s) => s.rows)).toEqual([[1], [2, 3, 4]]);
    t.statements[1]!.commit();
    await Promise.all(others);
    expect(t.committed).toEqual([1, 2, 3, 4]);
  });

  it('answers nobody before their row is committed', async () => {
    const t = setup();
    let answered = false;
    const writing = t.sut.write(7).then(() => (answered = true));
    await settle();
    expect(answered).toBe(false);
    t.statements[0]!.commit();
    await writing;
    expect(t.committed).toEqual([7]);
  });

  it('fails only the row that cannot be written when its group fails', async () => {
    const t = setup();
    const first = t.sut.write(1);
    await settle();
    const group = [5, -1, 6].map((row) =>
      t.sut.write(row).then(
        () => 'ok',
        (e: unknown) => String(e),
      ),
    );
    t.statements[0]!.commit();
    await first;
    await settle();
    t.statements[1]!.commit(new Error('foreign key'));
    await settle();
    for (const s of t.statements.slice(2)) s.commit();

    expect(await Promise.all(group)).toEqual(['ok', 'Error: row -1 refused', 'ok']);
    expect(t.committed).toEqual([1, 5, 6]);
  });

  it('puts at most maxRows rows in one statement', async () => {
    const t = setup(2);
    const first = t.sut.write(0);
    await settle();
    const rest = [1, 2, 3, 4, 5].map((row) => t.sut.write(row));
    for (let i = 0; i < 4; i += 1) {
      t.statements[i]!.commit();
      await settle();
      await settle();
    }
    await Promise.all([first, ...rest]);
    expect(t.statements.map((s) => s.rows)).toEqual([[0], [1, 2], [3, 4], [5]]);
  });
});

import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiskStats } from './disk-stats.js';

describe(DiskStats.name, () => {
  let dir: string;
  const disk = new DiskStats();

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tally-disk-stats-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes one complete reserve when two checks write it at once, leaving no partial file', async () => {
    const path = join(dir, '.disk-reserve');

    await Promise.all([disk.writeReserve(path, 3 * 1024 * 1024), disk.writeReserve(path, 3 * 1024 * 1024)]);

    expect(statSync(path).size).toBe(3 * 1024 * 1024);
    expect(readdirSync(dir)).toEqual(['.disk-reserve']);
  });

  it('removes the reserve and any copy of it still being written, and nothing else', async () => {
    const path = join(dir, '.disk-reserve');
    writeFileSync(path, 'x');
    writeFileSync(`${path}.0a1b2c.partial`, 'x');
    writeFileSync(join(dir, 'app_1'), 'x');

    await disk.remove(path);
    await disk.remove(path);

    expect(readdirSync(dir)).toEqual(['app_1']);
  });
});

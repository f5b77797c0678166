import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { containedPath } from './contained-path.js';

describe(containedPath.name, () => {
  const outside = mkdtempSync(join(tmpdir(), 'tally-contained-'));
  const root = join(outside, 'recordings');
  mkdirSync(join(root, 'app'), { recursive: true });
  writeFileSync(join(root, 'app', 'rec.mp4'), 'x');
  symlinkSync(outside, join(root, 'out'));
  symlinkSync(join(root, 'app'), join(root, 'alias'));
  afterAll(() => rmSync(outside, { recursive: true, force: true }));

  it('resolves paths inside the root, existing or not', async () => {
    await expect(containedPath(root, 'app/rec.mp4', 'source')).resolves.toBe(join(root, 'app', 'rec.mp4'));
    await expect(containedPath(root, 'app/new/rec.ladder', 'ladderDir')).resolves.toBe(join(root, 'app', 'new', 'rec.ladder'));
    await expect(containedPath(root, 'newapp/rec.mp4', 'source')).resolves.toBe(join(root, 'newapp', 'rec.mp4'));
    // A symlink that stays inside is fine.
    await expect(containedPath(root, 'alias/rec.mp4', 'source')).resolves.toBe(join(root, 'alias', 'rec.mp4'));
  });

  it.each(['', '.', 'app/..', '..', '../x', 'app/../../x', '/etc/passwd', root, join(root, 'app'), 'a\0b'])('refuses %j', async (value) => {
    await expect(containedPath(root, value, 'source')).rejects.toThrow(/^source .* is not a path inside /);
  });

  it('refuses a path through a symlink that leads out', async () => {
    await expect(containedPath(root, 'out/secret', 'source')).rejects.toThrow(/not a path inside/);
    await expect(containedPath(root, 'out/x/y.ladder', 'ladderDir', { followLast: false })).rejects.toThrow(/not a path inside/);
    await expect(containedPath(root, 'out', 'source')).rejects.toThrow(/not a path inside/);
  });

  it('lets a removed path be a symlink itself (rm removes the link, not its target)', async () => {
    await expect(containedPath(root, 'out', 'ladderDir', { followLast: false })).resolves.toBe(join(root, 'out'));
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DashboardFiles, safeRelativePath } from './dashboard-files.js';

describe(DashboardFiles.name, () => {
  const dirs: string[] = [];
  const build = (files: Record<string, string>): string => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-dashboard-'));
    dirs.push(dir);
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(join(dir, name, '..'), { recursive: true });
      writeFileSync(join(dir, name), content);
    }
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('reports a missing build instead of failing', async () => {
    const sut = new DashboardFiles(join(tmpdir(), 'tally-no-such-build'));

    expect(await sut.lookup('/dashboard/')).toEqual({ kind: 'not_built' });
  });

  it('serves index.html uncached and hashed assets as immutable', async () => {
    const sut = new DashboardFiles(build({ 'index.html': '<!doctype html>', 'assets/index-abc123.js': 'x' }));

    const index = await sut.lookup('/dashboard');
    const asset = await sut.lookup('/dashboard/assets/index-abc123.js?v=1');

    expect(index).toMatchObject({ kind: 'file', file: { relative: 'index.html', cacheControl: 'no-cache' } });
    expect(asset).toMatchObject({
      kind: 'file',
      file: { relative: 'assets/index-abc123.js', cacheControl: 'public, max-age=31536000, immutable' },
    });
  });

  it('falls back to index.html for app routes but not for missing files', async () => {
    const sut = new DashboardFiles(build({ 'index.html': '<!doctype html>' }));

    const route = await sut.lookup('/dashboard/apps/app_0123456789abcdef/streams');
    const missing = await sut.lookup('/dashboard/assets/gone-123.js');

    expect(route.kind === 'file' && route.file.relative).toBe('index.html');
    expect(missing).toEqual({ kind: 'not_found' });
  });

  it('never resolves outside the build directory', () => {
    expect(safeRelativePath('/dashboard/../package.json')).toBeUndefined();
    expect(safeRelativePath('/dashboard/%2e%2e/%2e%2e/etc/passwd')).toBeUndefined();
    expect(safeRelativePath('/dashboard/assets/..%2f..%2fsecret')).toBeUndefined();
    expect(safeRelativePath('/dashboard/.env')).toBeUndefined();
    expect(safeRelativePath('/dashboard/a%00b')).toBeUndefined();
    expect(safeRelativePath('/dashboard/%E0%A4%A')).toBeUndefined();
    expect(safeRelativePath('/dashboard//assets//x.js')).toBe('assets/x.js');
    expect(safeRelativePath('/dashboard')).toBe('');
  });
});

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const DASHBOARD = join(import.meta.dirname, '..');
const REPO = join(DASHBOARD, '..', '..');
export const DASHBOARD_INDEX = join(DASHBOARD, 'dist', 'index.html');

/**
 * vitest globalSetup: builds the dashboard once per run when dist/ is missing or older than its
 * sources, so a fresh clone's `npm test` serves the real build without a separate step.
 */
export default function setup(): void {
  if (!isStale()) return;
  console.log('[dashboard] building apps/dashboard (npm run build -w @tally/dashboard)');
  const result = spawnSync('npm', ['run', 'build', '-w', '@tally/dashboard', '--', '--logLevel', 'warn'], { cwd: REPO, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`the dashboard build failed (exit ${result.status ?? result.signal})`);
}

function isStale(): boolean {
  if (!existsSync(DASHBOARD_INDEX)) return true;
  const built = statSync(DASHBOARD_INDEX).mtimeMs;
  const sources = [
    join(DASHBOARD, 'index.html'),
    join(DASHBOARD, 'vite.config.ts'),
    join(DASHBOARD, 'package.json'),
    ...walk(join(DASHBOARD, 'src')),
  ];
  return sources.some((file) => statSync(file).mtimeMs > built);
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

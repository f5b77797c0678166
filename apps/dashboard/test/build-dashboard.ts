import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const REPO = join(import.meta.dirname, '..', '..', '..');

/**
 * vitest globalSetup: `npm run build:dashboard` once per run, so a fresh clone's `npm test` serves
 * the real build without a separate step. Nx builds it when its inputs (its sources and those of
 * the libs it imports, the lockfile) changed and restores it from its task cache otherwise (no Nx
 * daemon: scripts/test.sh says so for everything under `npm test`).
 */
export default function setup(): void {
  const result = spawnSync('npm', ['run', '--silent', 'build:dashboard'], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  // Nx's and Vite's report (a page of bundler warnings on a build) only when the build failed.
  if (result.status !== 0)
    throw new Error(`the dashboard build failed (exit ${result.status ?? result.signal}):\n${result.error ?? result.stdout.slice(-4000)}`);
}

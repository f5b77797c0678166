import { join } from 'node:path';
import { type Child, startChild } from './child.js';
import { waitFor } from './ports.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

export type AppRuntime = 'source' | 'built';

/** Young generation per service: the API trades ~10 MB idle for half the CPU per request under load (docs/capacity.md). */
const SEMI_SPACE_MB = { api: 8, worker: 2, agent: 2 } as const;

/** Tests run the sources; benchmarks set TALLY_APP_RUNTIME=built to measure what production runs (dist/). */
const defaultRuntime = (): AppRuntime => (process.env['TALLY_APP_RUNTIME'] === 'built' ? 'built' : 'source');

/** The command line that runs an app from source (TypeScript compiled at load) or from `npm run build`'s dist/. */
export function appCommand(name: 'api' | 'worker' | 'agent', runtime: AppRuntime = defaultRuntime()): string[] {
  return runtime === 'built'
    ? // The flags the installer's units run the services with (scripts/install/services.sh).
      [`--max-semi-space-size=${SEMI_SPACE_MB[name]}`, join(ROOT, 'dist', `${name}.js`)]
    : ['--import', '@swc-node/register/esm-register', join(ROOT, 'apps', name, 'src', 'main.ts')];
}

/** Runs an app's real entry point (apps/<name>/src/main.ts, or its build in dist/) as its own OS process. */
export async function startAppProcess(
  name: 'api' | 'worker' | 'agent',
  env: Readonly<Record<string, string>>,
  logFile: string,
  runtime: AppRuntime = defaultRuntime(),
): Promise<Child> {
  const child = startChild(process.execPath, appCommand(name, runtime), logFile, { ...process.env, ...env });
  if (name === 'api') {
    const url = `http://127.0.0.1:${env['TALLY_PORT']}/healthz`;
    await waitFor(
      `api on ${url}`,
      async () => {
        if (child.process.exitCode !== null) throw new Error(`api exited with ${child.process.exitCode}; see ${logFile}`);
        return (await fetch(url)).status === 200 ? true : undefined;
      },
      60_000,
    );
  }
  return child;
}

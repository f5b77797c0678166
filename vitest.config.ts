import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

// SWC, not esbuild: Nest's dependency injection needs decorator metadata.
const swcPlugin = () =>
  swc.vite({
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { decoratorMetadata: true, legacyDecorator: true },
      target: 'es2023',
    },
  });

const exclude = ['**/node_modules/**', '**/generated/**'];

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [swcPlugin()],
        test: {
          name: 'unit',
          include: ['apps/*/src/**/*.spec.ts', 'libs/*/src/**/*.spec.ts', 'apps/dashboard/test/**/*.spec.ts', 'bench/**/*.spec.ts'],
          exclude: [...exclude, '**/*.int.spec.ts', '**/*.medium.spec.ts', '**/*.e2e.spec.ts'],
        },
      },
      {
        plugins: [swcPlugin()],
        test: {
          name: 'integration',
          // *.medium.spec.ts: one service with its real repositories on Postgres and Redis, LiveKit faked at its adapters.
          include: [
            'apps/*/src/**/*.int.spec.ts',
            'apps/*/src/**/*.medium.spec.ts',
            'libs/*/src/**/*.int.spec.ts',
            'apps/*/test/**/*.e2e.spec.ts',
          ],
          exclude,
          // The dashboard's browser tests load the real build from apps/dashboard/dist (npm run build:dashboard).
          globalSetup: ['libs/testing/src/global-setup.ts', 'apps/dashboard/test/build-dashboard.ts'],
          // Each file starts its own Redis and livekit-server; two cores run them one file at a time.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        plugins: [swcPlugin()],
        test: {
          // The platform ./install.sh installed, driven through its public surface only:
          // scripts/acceptance.sh installs it, runs these, upgrades it and runs them again; the
          // object-store spec runs only on its --object-store install (TALLY_ACCEPTANCE_OBJECT_STORE=1).
          name: 'acceptance',
          include:
            process.env['TALLY_ACCEPTANCE_OBJECT_STORE'] === '1'
              ? ['test/acceptance/object-store.acceptance.spec.ts']
              : ['test/acceptance/**/*.acceptance.spec.ts'],
          exclude: [...exclude, ...(process.env['TALLY_ACCEPTANCE_OBJECT_STORE'] === '1' ? [] : ['**/object-store.acceptance.spec.ts'])],
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});

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

const integrationFiles = [
  'apps/*/src/**/*.int.spec.ts',
  'apps/*/src/**/*.medium.spec.ts',
  'libs/*/src/**/*.int.spec.ts',
  'apps/*/test/**/*.e2e.spec.ts',
];

/**
 * Integration files that run alone, after the others: they measure what another file running
 * beside them would change (this host's free disk, its memory, a clock within 2 %, a recording's
 * length against the test's clock, a delivery within 2 s, the timing of a failover).
 */
const runAlone = [
  'apps/agent/src/agent.int.spec.ts',
  'apps/worker/src/disk/disk-watermark.int.spec.ts',
  'libs/admission/src/disk-ledger.int.spec.ts',
  'apps/api/test/disk-admission.e2e.spec.ts',
  'apps/api/test/disk-watermark.e2e.spec.ts',
  'apps/api/test/disk-watermark-agent.e2e.spec.ts',
  'apps/worker/test/redis-loss.e2e.spec.ts',
  'apps/api/test/metering.e2e.spec.ts',
  'apps/api/test/metering-cameras-hls.e2e.spec.ts',
  'apps/api/test/passthrough.e2e.spec.ts',
  'apps/api/test/recordings.e2e.spec.ts',
  'apps/api/test/hls.e2e.spec.ts',
  'apps/api/test/webhooks-fairness.e2e.spec.ts',
  'apps/api/test/redis-failover.e2e.spec.ts',
  'apps/api/test/postgres-restart.e2e.spec.ts',
  'apps/api/test/control-join.e2e.spec.ts',
  'apps/worker/test/worker.e2e.spec.ts',
];

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
          include: integrationFiles,
          exclude: [...exclude, ...runAlone],
          // The dashboard's browser tests load the real build from apps/dashboard/dist (npm run build:dashboard).
          globalSetup: ['libs/testing/src/global-setup.ts', 'apps/dashboard/test/build-dashboard.ts'],
          // Each file starts its own Redis, livekit-server and API on free ports: two at a time, after
          // the unit tests. A file spends most of its time waiting on media and timers.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        plugins: [swcPlugin()],
        test: {
          name: 'integration-alone',
          include: runAlone,
          exclude,
          globalSetup: ['libs/testing/src/global-setup.ts'],
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
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

import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runMigrations } from '@tally/db';
import {
  ApiClient,
  type Child,
  createDatabase,
  startAppProcess,
  startPostgres,
  startStack,
  TEMPLATE_DATABASE,
  type StackOptions,
  type TestStack,
} from '@tally/testing';

export type BenchStack = Readonly<{
  stack: TestStack;
  /** The API as its own OS process (as in production), so that its CPU and memory can be measured. */
  api: Child;
  apiUrl: string;
  admin: ApiClient;
  stop(): Promise<void>;
}>;

/**
 * Benchmarks drive one app far beyond production rates: its budgets are raised here, explicitly,
 * rather than the defaults loosened. The limiter still runs (and costs what it costs) on every request.
 */
export const BENCH_RATE_LIMITS = {
  TALLY_RATE_LIMIT_REQUESTS_PER_MINUTE: '100000000',
  TALLY_RATE_LIMIT_STARTS_PER_MINUTE: '100000000',
  TALLY_RATE_LIMIT_ADMIN_PER_MINUTE: '100000000',
} as const;

/**
 * The test stack (Postgres, Redis, livekit-server, agent, optionally egress / ingress) plus the API
 * as a separate process: the same services npm test starts, reused so a benchmark measures them.
 */
export async function startBenchStack(
  options: Pick<StackOptions, 'egress' | 'ingress' | 'env' | 'livekitPrometheusPort' | 'nodeBudget' | 'turn'> & {
    /** Only for the API process (NODE_OPTIONS for a CPU profile, say). */
    apiEnv?: Record<string, string>;
  } = {},
): Promise<BenchStack> {
  const postgres = await startPostgres();
  try {
    await runMigrations(await createDatabase(postgres.url, TEMPLATE_DATABASE));
    const stack = await startStack({ ...options, env: { ...BENCH_RATE_LIMITS, ...options.env }, postgresUrl: postgres.url });
    const api = await startAppProcess('api', { ...stack.env, ...options.apiEnv }, join(tmpdir(), `tally-bench-api-${stack.nodeId}.log`));
    const apiUrl = `http://127.0.0.1:${stack.config.http.port}`;
    return {
      stack,
      api,
      apiUrl,
      admin: new ApiClient(apiUrl, stack.adminKey),
      async stop() {
        await api.stop();
        await stack.stop();
        await postgres.stop();
      },
    };
  } catch (error) {
    await postgres.stop();
    throw error;
  }
}

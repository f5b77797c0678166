import { startEgress, TEST_NODE_BUDGET, type TestStack } from '@tally/testing';
import { measurePassthrough, type PassthroughPhase, type PassthroughRun } from './passthrough-phase.js';

export type EgressEnv = Readonly<Record<string, string>>;
export type PassthroughBaseline = Readonly<{ env: EgressEnv; run: PassthroughRun }>;

/** `--baselineEnv 'K=V,K=V;K=V'`: the environments the baseline egresses run with, one after the other. */
export function parseBaselineEnvs(text: string): readonly EgressEnv[] {
  return text.split(';').map((env) =>
    Object.fromEntries(
      env
        .split(',')
        .filter((kv) => kv.includes('='))
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    ),
  );
}

export const envText = (env: EgressEnv): string =>
  Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');

/**
 * The same passthrough recordings on egress restarted with each baseline environment in turn (the
 * stack's own egress is stopped first): baselines measured in this run, for its ratios.
 */
export async function measurePassthroughBaselines(
  stack: TestStack,
  envs: readonly EgressEnv[],
  phase: Omit<PassthroughPhase, 'roots' | 'label'>,
  settle: (ms: number) => Promise<unknown>,
): Promise<PassthroughBaseline[]> {
  const baselines: PassthroughBaseline[] = [];
  await stack.egress?.stop();
  for (const [i, env] of envs.entries()) {
    phase.log(`egress restarted with a baseline environment (${envText(env)})`);
    const egress = await startEgress({ livekit: stack.livekit, redisUrl: stack.redis.url, budget: TEST_NODE_BUDGET, processEnv: env });
    try {
      await settle(5_000);
      const roots = () => (egress.process.pid === undefined ? [] : [egress.process.pid]);
      baselines.push({ env, run: await measurePassthrough({ ...phase, roots, label: `passthrough-baseline-${i}` }) });
    } finally {
      await egress.stop();
    }
  }
  return baselines;
}

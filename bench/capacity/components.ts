import { dirname, join } from 'node:path';
import type { BaseLoadComponent } from '@tally/capacity';
import type { Child } from '@tally/testing';
import { pidsMatching } from '../lib/proc.js';
import type { BenchStack } from '../lib/stack.js';

/** A running service and how to find its processes now (supervised services may have restarted). */
export type Component = Readonly<{ name: string; baseLoad?: BaseLoadComponent; roots: () => number[] }>;

const pidOf = (child: Child | undefined) => () => (child?.process.pid === undefined ? [] : [child.process.pid]);

/** Processes whose command line has all of `needles`: only this run's, although other stacks share the host. */
function matching(...needles: string[]): () => number[] {
  return () => {
    const [first, ...rest] = needles;
    const candidates = pidsMatching(first ?? '');
    return candidates.filter((pid) => rest.every((n) => pidsMatching(n).includes(pid)));
  };
}

/** Every long-running service of the node, as bench/capacity charges them to the base load. */
export function nodeComponents(bench: BenchStack, worker: Child): Component[] {
  const { stack } = bench;
  const redisPort = stack.redis.port;
  const postgresPort = new URL(stack.env['DATABASE_URL'] ?? '').port;
  return [
    { name: 'livekit-server', baseLoad: 'livekitServer', roots: matching(join(dirname(stack.livekit.logFile), 'livekit.yaml')) },
    { name: 'redis', baseLoad: 'redis', roots: matching('redis-server', `:${redisPort}`) },
    { name: 'postgres', baseLoad: 'postgres', roots: matching('bin/postgres', `-p ${postgresPort}`) },
    { name: 'api', baseLoad: 'api', roots: pidOf(bench.api) },
    { name: 'worker', baseLoad: 'worker', roots: pidOf(worker) },
    { name: 'agent', baseLoad: 'agent', roots: pidOf(stack.agent) },
    { name: 'egress (idle)', roots: pidOf(stack.egress) },
    ...(stack.ingress ? [{ name: 'ingress (idle)', baseLoad: 'ingressIdle' as const, roots: pidOf(stack.ingress) }] : []),
  ];
}

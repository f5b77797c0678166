import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { admit, fits, type PoolState } from './admission.js';
import { unlimited } from './app-limits.js';
import { DEFAULT_NODE_BUDGET, type NodeBudget } from './budget.js';
import { WORKLOAD_KINDS, type CostTable } from './costs.js';
import { EGRESS_NEVER_CPU_COST, egressAdmission, type EgressCpuCost } from './egress-config.js';
import { EGRESS_MODES, egressKindOf, type EgressMode } from './egress-mode.js';
import {
  EGRESS_CGROUP_FILES,
  egressHostCpus,
  egressLogLevel,
  egressRedisConfig,
  renderEgressServiceConfig,
} from './egress-service-config.js';
import { DEFAULT_MODEL, type CapacityModel } from './model.js';
import { nodeCapacity } from './pool.js';
import { nodesArb } from './test-arbitraries.js';
import { EMPTY_USAGE } from './usage.js';

/**
 * Egress v1.8.6's admission during the 30 s it holds each job's configured cost
 * (stats.Monitor.canAcceptRequestLocked / AcceptRequest), replayed in floating point.
 */
function egressService(cost: EgressCpuCost, hostCpus: number) {
  const held: number[] = [];
  let web = 0;
  // A passthrough recording is two Track jobs, started one after the other.
  const required: Record<EgressMode, number[]> = {
    room_composite: [cost.room_composite_cpu_cost],
    track_composite: [cost.track_composite_cpu_cost],
    track: [cost.track_cpu_cost],
    passthrough: [cost.track_cpu_cost, cost.track_cpu_cost],
  };
  const fitsJob = (job: number, extra: number): boolean => {
    const holds = held.length + extra;
    const available = holds === 0 ? hostCpus : hostCpus * cost.max_cpu_utilization - held.reduce((a, b) => a + b, 0) - extra * job;
    return available >= job;
  };
  const fits = (mode: EgressMode): boolean => {
    if (mode === 'room_composite' && web >= cost.max_concurrent_web) return false;
    return required[mode].every((job, i) => fitsJob(job, i));
  };
  return {
    fits,
    take(mode: EgressMode): void {
      held.push(...required[mode]);
      if (mode === 'room_composite') web++;
    },
    start(mode: EgressMode): boolean {
      if (!fits(mode)) return false;
      this.take(mode);
      return true;
    },
  };
}

/** Tally's admission of the same jobs on a pool of just this node. */
function tallyNode(node: NodeBudget, model: CapacityModel) {
  let pool: PoolState = { nodes: [node], model, usage: EMPTY_USAGE };
  const request = (mode: EgressMode) => ({ appId: 'app', limits: unlimited(), kind: egressKindOf(mode) });
  return {
    fits: (mode: EgressMode): boolean => fits(pool, request(mode)).ok,
    start(mode: EgressMode): boolean {
      const result = admit(pool, request(mode));
      if (result.ok) pool = { ...pool, usage: result.usage };
      return result.ok;
    },
  };
}

/** The default costs, each egress kind scaled by its own whole factor of eighths. */
const modelArb: fc.Arbitrary<CapacityModel> = fc
  .array(fc.integer({ min: 2, max: 32 }), { minLength: WORKLOAD_KINDS.length, maxLength: WORKLOAD_KINDS.length })
  .map((eighths) => {
    const costs = Object.fromEntries(
      WORKLOAD_KINDS.map((kind, i) => {
        const c = DEFAULT_MODEL.costs[kind];
        const f = (eighths[i] ?? 8) / 8;
        return [kind, { ...c, ramMb: c.ramMb * f, cpuMillicores: c.cpuMillicores * f }];
      }),
    ) as CostTable;
    return { ...DEFAULT_MODEL, costs };
  });

describe(egressAdmission.name, () => {
  it('lets egress on the default 8 vCPU / 8 GB origin take as many jobs of each mode as Tally (lone tracks: at least as many)', () => {
    const sut = egressAdmission(DEFAULT_MODEL, DEFAULT_NODE_BUDGET, 8);

    expect(sut.modes).toMatchObject({
      room_composite: { maxConcurrent: 4, binding: 'ramMb' },
      track_composite: { maxConcurrent: 18, binding: 'ramMb' },
      track: { maxConcurrent: 28, binding: 'ramMb' },
    });
    expect(sut.modes.passthrough.maxConcurrent).toBeGreaterThanOrEqual(100);
    expect(sut.cpuCost.max_concurrent_web).toBe(4);
    for (const mode of EGRESS_MODES) {
      const service = egressService(sut.cpuCost, 8);
      const started = Array.from({ length: 1_000 }, () => service.start(mode)).filter(Boolean).length;
      if (mode === 'track') expect(started, mode).toBeGreaterThanOrEqual(sut.modes[mode].maxConcurrent);
      else expect(started, mode).toBe(sut.modes[mode].maxConcurrent);
    }
  });

  it('gives egress the CPU share Tally leaves for egress jobs, so a CPU-bound job is held at its model cost', () => {
    const cpuHeavy: CapacityModel = {
      ...DEFAULT_MODEL,
      costs: {
        ...DEFAULT_MODEL.costs,
        'egress.track': { ramMb: 10, cpuMillicores: 1_000, nicKbps: 100, nvencSessions: 0 },
        'egress.passthrough': { ramMb: 20, cpuMillicores: 2_000, nicKbps: 200, nvencSessions: 0 },
      },
    };
    const node = DEFAULT_NODE_BUDGET;
    const room = nodeCapacity(node, cpuHeavy).allocatable.cpuMillicores - cpuHeavy.runtimes.egress.cpuMillicores;

    const sut = egressAdmission(cpuHeavy, node, 8);

    expect(sut.cpuCost.max_cpu_utilization).toBeCloseTo(room / node.cpuMillicores, 12);
    expect(sut.modes.track.binding).toBe('cpuMillicores');
    expect(sut.cpuCost.track_cpu_cost).toBeCloseTo(1, 6); // 1000 millicores on a host whose cores are the budget
    expect(sut.exact).toBe(false);
  });

  it('scales to the cores egress sees when the budget is not the hardware (a 2-core test host posing as 8)', () => {
    const onEight = egressAdmission(DEFAULT_MODEL, DEFAULT_NODE_BUDGET, 8).cpuCost;

    const sut = egressAdmission(DEFAULT_MODEL, DEFAULT_NODE_BUDGET, 2).cpuCost;

    expect(sut.track_composite_cpu_cost).toBeCloseTo(onEight.track_composite_cpu_cost / 4, 12);
    const service = egressService(sut, 2);
    expect(Array.from({ length: 40 }, () => service.start('track_composite')).filter(Boolean)).toHaveLength(18);
  });

  it('makes egress refuse a mode the node may not host, even as its first job', () => {
    const node: NodeBudget = { ...DEFAULT_NODE_BUDGET, accepts: ['egress.track', 'egress.track_composite'] };

    const sut = egressAdmission(DEFAULT_MODEL, node, 8);

    expect(sut.modes.room_composite).toMatchObject({ maxConcurrent: 0, binding: undefined });
    expect(sut.cpuCost.room_composite_cpu_cost).toBe(EGRESS_NEVER_CPU_COST);
    expect(sut.cpuCost.web_cpu_cost).toBe(EGRESS_NEVER_CPU_COST);
    expect(egressService(sut.cpuCost, 8).start('room_composite')).toBe(false);
    expect(egressService(sut.cpuCost, 8).start('track')).toBe(true);
  });

  it('holds web and participant egress like their nearest mode', () => {
    const { cpuCost } = egressAdmission(DEFAULT_MODEL, DEFAULT_NODE_BUDGET, 8);

    expect(cpuCost.web_cpu_cost).toBe(cpuCost.room_composite_cpu_cost);
    expect(cpuCost.audio_room_composite_cpu_cost).toBe(cpuCost.room_composite_cpu_cost);
    expect(cpuCost.audio_web_cpu_cost).toBe(cpuCost.room_composite_cpu_cost);
    expect(cpuCost.participant_cpu_cost).toBe(cpuCost.track_composite_cpu_cost);
  });

  it('rejects a host without cores', () => {
    expect(() => egressAdmission(DEFAULT_MODEL, DEFAULT_NODE_BUDGET, 0)).toThrow(RangeError);
  });

  it('never lets egress start a job Tally refuses, and starts every one Tally admits when the modes share a binding resource', () => {
    fc.assert(
      fc.property(
        nodesArb({ maxNodes: 1 }),
        modelArb,
        fc.integer({ min: 1, max: 64 }),
        fc.array(fc.constantFrom(...EGRESS_MODES), { maxLength: 60 }),
        ([node], model, hostCpus, jobs) => {
          const sut = egressAdmission(model, node!, hostCpus);
          const egress = egressService(sut.cpuCost, hostCpus);
          const tally = tallyNode(node!, model);
          // Lone Track jobs held at half a passthrough pair's share leave egress more room than Tally.
          const trackHeldLow = sut.cpuCost.track_cpu_cost < sut.modes.track.cpuCost;
          // ... and pairs dearer than two lone tracks are held at two lone tracks' share.
          const pairHeldLow = 2 * sut.cpuCost.track_cpu_cost < sut.modes.passthrough.cpuCost - 1e-9;
          let loneTracks = 0;
          let pairs = 0;
          for (const mode of jobs) {
            const [admitted, accepted] = [tally.fits(mode), egress.fits(mode)];
            // Egress cannot tell a pair's Track jobs from lone ones: a node that takes tracks takes pairs.
            const pairOnTrackNode = mode === 'passthrough' && sut.modes.passthrough.maxConcurrent === 0;
            const lenient =
              pairOnTrackNode ||
              (trackHeldLow && (mode === 'track' || loneTracks > 0)) ||
              (pairHeldLow && (mode === 'passthrough' || pairs > 0));
            if (accepted && !lenient) expect(admitted, `egress took a ${mode} Tally refuses`).toBe(true);
            if (sut.exact && !pairOnTrackNode) expect(accepted, `egress refused a ${mode} Tally admits`).toBe(admitted);
            // A job runs only when both let it.
            if (admitted && accepted) {
              tally.start(mode);
              egress.take(mode);
              if (mode === 'track') loneTracks += 1;
              if (mode === 'passthrough') pairs += 1;
            }
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe(renderEgressServiceConfig.name, () => {
  const input = {
    apiKey: 'key',
    apiSecret: 'secret-0123456789abcdef0123456789abcdef',
    wsUrl: 'ws://127.0.0.1:7880',
    redisUrl: 'redis://:s3cret@127.0.0.1:6380',
    healthPort: 9090,
    templatePort: 7980,
    model: DEFAULT_MODEL,
    node: DEFAULT_NODE_BUDGET,
    hostCpus: 8,
    chromeSandbox: true,
  };

  it('writes what egress needs to join livekit-server through its Redis, with admission from the model', () => {
    const sut = renderEgressServiceConfig(input);

    expect(sut).toEqual({
      api_key: 'key',
      api_secret: input.apiSecret,
      ws_url: 'ws://127.0.0.1:7880',
      redis: { address: '127.0.0.1:6380', password: 's3cret' },
      health_port: 9090,
      template_port: 7980,
      logging: { level: 'info' },
      insecure: true,
      enable_chrome_sandbox: true,
      cpu_cost: egressAdmission(DEFAULT_MODEL, DEFAULT_NODE_BUDGET, 8).cpuCost,
    });
    expect(JSON.parse(JSON.stringify(sut))).toEqual(sut);
  });

  it('keeps Chrome on TLS for a wss:// server and adds the metrics port when asked', () => {
    const sut = renderEgressServiceConfig({ ...input, wsUrl: 'wss://lk.example.com', prometheusPort: 9100, logLevel: 'debug' });

    expect(sut).toMatchObject({ insecure: false, prometheus_port: 9100, logging: { level: 'debug' } });
  });

  it('opens no status port unless asked: egress would serve every request on every address', () => {
    const { healthPort: _, ...withoutPort } = input;
    const sut = renderEgressServiceConfig(withoutPort);

    expect(sut).not.toHaveProperty('health_port');
    expect(sut).not.toHaveProperty('prometheus_port');
  });

  it('refuses a URL egress cannot use', () => {
    expect(() => renderEgressServiceConfig({ ...input, wsUrl: 'http://127.0.0.1:7880' })).toThrow(/ws:\/\//);
    expect(() => renderEgressServiceConfig({ ...input, healthPort: 0 })).toThrow(/healthPort/);
  });
});

describe(egressRedisConfig.name, () => {
  it.each([
    ['redis://127.0.0.1:6379', { address: '127.0.0.1:6379' }],
    ['redis://localhost', { address: 'localhost:6379' }],
    ['redis://:p%40ss@10.0.0.5:7000/2', { address: '10.0.0.5:7000', password: 'p@ss', db: 2 }],
    ['rediss://user:pw@redis.example.com:6380', { address: 'redis.example.com:6380', username: 'user', password: 'pw', use_tls: true }],
  ])('reads %s', (url, expected) => {
    expect(egressRedisConfig(url)).toEqual(expected);
  });
});

describe(egressLogLevel.name, () => {
  it.each([
    ['trace', 'debug'],
    ['info', 'info'],
    ['warn', 'warn'],
    ['fatal', 'error'],
    ['silent', 'error'],
  ])('maps %s to %s', (tally, egress) => {
    expect(egressLogLevel(tally)).toBe(egress);
  });
});

describe(egressHostCpus.name, () => {
  const files = (entries: Record<string, string>) => (path: string) => entries[path];

  it.each([
    ['no cgroup files', {}, 2],
    ['cgroup v2 without a quota', { [EGRESS_CGROUP_FILES.v2Stat]: 'usage_usec 1\n', [EGRESS_CGROUP_FILES.v2Max]: 'max 100000\n' }, 2],
    ['cgroup v2 with 1.5 cores', { [EGRESS_CGROUP_FILES.v2Stat]: 'usage_usec 1\n', [EGRESS_CGROUP_FILES.v2Max]: '150000 100000\n' }, 1.5],
    [
      'cgroup v1 with 3 cores',
      { [EGRESS_CGROUP_FILES.v1Usage]: '1\n', [EGRESS_CGROUP_FILES.v1Quota]: '300000\n', [EGRESS_CGROUP_FILES.v1Period]: '100000\n' },
      3,
    ],
    ['cgroup v1 unlimited', { [EGRESS_CGROUP_FILES.v1Usage]: '1\n', [EGRESS_CGROUP_FILES.v1Quota]: '-1\n' }, 2],
  ])('counts %s like egress', (_, entries, expected) => {
    expect(egressHostCpus(files(entries), 2)).toBe(expected);
  });
});

/**
 * The three divisible resources of a node. RAM in MB (2^20 bytes, so the measured 1.274 GiB is
 * 1305 MB), CPU in millicores (1000 = one vCPU), NIC in kbps counting media in and out of the host.
 * NVENC sessions are not divisible across GPUs, so they are tracked per GPU elsewhere.
 */
export type Load = Readonly<{ ramMb: number; cpuMillicores: number; nicKbps: number }>;

export const LOAD_KEYS = ['ramMb', 'cpuMillicores', 'nicKbps'] as const;
export type LoadKey = (typeof LOAD_KEYS)[number];

export const ZERO_LOAD: Load = Object.freeze({ ramMb: 0, cpuMillicores: 0, nicKbps: 0 });

export function load(ramMb: number, cpuMillicores: number, nicKbps = 0): Load {
  return { ramMb, cpuMillicores, nicKbps };
}

export function addLoad(a: Load, b: Load): Load {
  return { ramMb: a.ramMb + b.ramMb, cpuMillicores: a.cpuMillicores + b.cpuMillicores, nicKbps: a.nicKbps + b.nicKbps };
}

export function subtractLoad(a: Load, b: Load): Load {
  return { ramMb: a.ramMb - b.ramMb, cpuMillicores: a.cpuMillicores - b.cpuMillicores, nicKbps: a.nicKbps - b.nicKbps };
}

export function scaleLoad(a: Load, factor: number): Load {
  return { ramMb: a.ramMb * factor, cpuMillicores: a.cpuMillicores * factor, nicKbps: a.nicKbps * factor };
}

export function sumLoads(loads: Iterable<Load>): Load {
  let total = ZERO_LOAD;
  for (const l of loads) total = addLoad(total, l);
  return total;
}

/** Negative components (a base load larger than the budget) become 0: nothing can be hosted there. */
export function clampLoad(a: Load): Load {
  return { ramMb: Math.max(0, a.ramMb), cpuMillicores: Math.max(0, a.cpuMillicores), nicKbps: Math.max(0, a.nicKbps) };
}

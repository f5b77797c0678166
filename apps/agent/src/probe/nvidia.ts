import type { GpuBudget } from '@tally/capacity';

/** Arguments for `nvidia-smi`; the name comes first because it is the only field that could hold a comma. */
export const NVIDIA_SMI_ARGS = ['--query-gpu=name,driver_version', '--format=csv,noheader'] as const;

export type NvidiaGpu = Readonly<{ name: string; driverVersion: string }>;

export function parseNvidiaSmiCsv(csv: string): NvidiaGpu[] {
  const gpus: NvidiaGpu[] = [];
  for (const line of csv.split('\n')) {
    const fields = line.split(',').map((f) => f.trim());
    const driverVersion = fields.pop();
    const name = fields.join(', ');
    if (driverVersion === undefined || name.length === 0) continue;
    gpus.push({ name, driverVersion });
  }
  return gpus;
}

/** Data-centre compute GPUs without an NVENC unit. */
const NO_NVENC = /\b(A100|A30|A800|H100|H200|H800)\b/i;
/** NVIDIA's support matrix gives these entry professional cards the consumer session limit. */
const ENTRY_PROFESSIONAL = /\b(P400|P600|P620|P1000|T400|T600|T1000)\b/;
const CONSUMER = /\b(GeForce|TITAN)\b/i;

/**
 * Concurrent NVENC sessions the driver allows. Consumer cards are capped by the driver: 8 from
 * driver 550, 5 from 530, 3 before. Professional and data-centre cards have no driver cap; their
 * encoder throughput is the limit, so `unlimitedCap` (operator config) stands in.
 */
export function nvencSessionLimit(gpu: NvidiaGpu, unlimitedCap: number): number {
  if (NO_NVENC.test(gpu.name)) return 0;
  if (!CONSUMER.test(gpu.name) && !ENTRY_PROFESSIONAL.test(gpu.name)) return unlimitedCap;
  const major = Number.parseInt(gpu.driverVersion, 10);
  if (!Number.isFinite(major)) return 3;
  if (major >= 550) return 8;
  if (major >= 530) return 5;
  return 3;
}

export function gpuBudgets(gpus: readonly NvidiaGpu[], unlimitedCap: number): GpuBudget[] {
  return gpus.map((gpu) => ({ name: gpu.name, nvencSessions: nvencSessionLimit(gpu, unlimitedCap) }));
}

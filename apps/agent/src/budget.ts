import { DEFAULT_NODE_BUDGET, type GpuBudget } from '@tally/capacity';
import type { NodeBudgetReport } from '@tally/contracts';

/** What the probe found; `nicMbps` is undefined when the kernel does not report a link speed. */
export type MeasuredBudget = Readonly<{
  cpuMillicores: number;
  ramMb: number;
  nicMbps: number | undefined;
  gpus: readonly GpuBudget[];
  /** Things an operator should know, e.g. nvidia-smi present but failing. */
  warnings: readonly string[];
}>;

/** Operator config wins over measurement, in either direction: the operator may know better. */
export type BudgetOverrides = Readonly<{
  cpuMillicores?: number | undefined;
  ramMb?: number | undefined;
  nicMbps?: number | undefined;
  /** Sessions per GPU, for every detected GPU. */
  nvencSessions?: number | undefined;
}>;

export function resolveBudget(measured: MeasuredBudget, overrides: BudgetOverrides): { budget: NodeBudgetReport; warnings: string[] } {
  const warnings = [...measured.warnings];
  let nicMbps = overrides.nicMbps ?? measured.nicMbps;
  if (nicMbps === undefined) {
    nicMbps = DEFAULT_NODE_BUDGET.nicMbps;
    warnings.push(`the kernel reports no NIC speed; assuming ${nicMbps} Mb/s (set TALLY_NODE_NIC_MBPS)`);
  }
  return {
    budget: {
      cpuMillicores: overrides.cpuMillicores ?? measured.cpuMillicores,
      ramMb: overrides.ramMb ?? measured.ramMb,
      nicMbps,
      gpus: measured.gpus.map((g) => ({ ...g, nvencSessions: overrides.nvencSessions ?? g.nvencSessions })),
    },
    warnings,
  };
}

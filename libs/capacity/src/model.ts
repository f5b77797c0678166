import { DEFAULT_BASE_LOAD, type BaseLoad } from './budget.js';
import { DEFAULT_COSTS, DEFAULT_RUNTIMES, type CostTable, type RuntimeTable } from './costs.js';
import { DEFAULT_DISK_MODEL, type DiskModel } from './disk.js';

/** Everything the admission math needs besides the nodes: the defaults, or a calibration profile applied to them. */
export type CapacityModel = Readonly<{ costs: CostTable; runtimes: RuntimeTable; baseLoad: BaseLoad; disk: DiskModel }>;

export const DEFAULT_MODEL: CapacityModel = Object.freeze({
  costs: DEFAULT_COSTS,
  runtimes: DEFAULT_RUNTIMES,
  baseLoad: DEFAULT_BASE_LOAD,
  disk: DEFAULT_DISK_MODEL,
});

/**
 * cgroup limits, v1 and v2. A limit set on any ancestor of the process's cgroup applies, so the
 * tightest one along the path up to the mount point wins.
 */
export type CgroupMount = Readonly<{ version: 1 | 2; mountPoint: string; root: string; controllers: readonly string[] }>;

/** The `cgroup` and `cgroup2` mounts of /proc/self/mountinfo. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const fields = left.split(' ');
    const [fsType, , superOptions = ''] = right.split(' ');
    const root = fields[3];
    const mountPoint = fields[4];
    if (root === undefined || mountPoint === undefined) continue;
    if (fsType === 'cgroup2') mounts.push({ version: 2, mountPoint: unescape(mountPoint), root: unescape(root), controllers: [] });
    if (fsType === 'cgroup') {
      mounts.push({ version: 1, mountPoint: unescape(mountPoint), root: unescape(root), controllers: superOptions.split(',') });
    }
  }
  return mounts;
}

/** /proc/self/cgroup: the v2 path (`0::/path`) and the v1 path of each controller. */
export type CgroupMembership = Readonly<{ unified: string | undefined; controllers: ReadonlyMap<string, string> }>;

export function parseProcSelfCgroup(text: string): CgroupMembership {
  let unified: string | undefined;
  const controllers = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!match) continue;
    const [, id, names = '', path = '/'] = match;
    if (id === '0' && names === '') unified = path;
    else for (const name of names.split(',')) controllers.set(name, path);
  }
  return { unified, controllers };
}

/** The directory of `path` under `mount`, then each parent up to the mount point. */
export function cgroupDirs(mount: CgroupMount, path: string): string[] {
  const root = mount.root === '/' ? '' : mount.root;
  // Without a cgroup namespace the path is host-absolute; with one (or when it lies outside what is mounted) only the mount point is visible.
  const relative = path === mount.root ? '' : path.startsWith(`${root}/`) ? path.slice(root.length) : '';
  const parts = relative.split('/').filter((p) => p.length > 0 && p !== '..');
  const dirs: string[] = [];
  for (let n = parts.length; n >= 0; n--) dirs.push([mount.mountPoint, ...parts.slice(0, n)].join('/'));
  return dirs;
}

/** v2 `cpu.max`: "max 100000" or "<quota> <period>" in microseconds. */
export function parseCpuMax(text: string): number | undefined {
  const [quota, period] = text.trim().split(/\s+/);
  return quota === undefined || period === undefined ? undefined : quotaMillicores(Number(quota), Number(period));
}

/** v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`; a quota of -1 means none. */
export function parseCfsQuota(quotaText: string, periodText: string): number | undefined {
  return quotaMillicores(Number(quotaText.trim()), Number(periodText.trim()));
}

function quotaMillicores(quota: number, period: number): number | undefined {
  if (!Number.isFinite(quota) || !Number.isFinite(period) || quota <= 0 || period <= 0) return undefined;
  return Math.floor((quota / period) * 1_000);
}

/** v2 `memory.max` ("max" when unset) or v1 `memory.limit_in_bytes` (a huge number when unset), in bytes. */
export function parseMemoryLimit(text: string): number | undefined {
  const value = Number(text.trim());
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

export function tightest(values: readonly (number | undefined)[]): number | undefined {
  const set = values.filter((v): v is number => v !== undefined);
  return set.length === 0 ? undefined : Math.min(...set);
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

import { readFile, realpath, stat, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { DiskRole, NodeFilesystem } from '@tally/contracts';

/** One filesystem as the kernel reports it for a directory on it. */
export type FsStat = Readonly<{ device: string; mount: string; totalBytes: number; freeBytes: number }>;

/** The agent's only view of its filesystems; unit tests give it a fake. */
export type FilesystemProbe = Readonly<{ stat(dir: string): Promise<FsStat> }>;

/** A directory Tally writes media to, and what it writes there. */
export type MediaDir = Readonly<{ role: DiskRole; dir: string }>;

export type FilesystemKeys = Readonly<{
  nodeId: string;
  /** Set when the recordings filesystem is mounted by several nodes: their reservations share `shared:<name>`. */
  sharedName?: string | undefined;
}>;

/**
 * One entry per filesystem (by device) holding any of `dirs`, listing its roles and directories.
 * A directory that cannot be measured is left out and reported through `onError`.
 */
export async function measureFilesystems(
  probe: FilesystemProbe,
  dirs: readonly MediaDir[],
  keys: FilesystemKeys,
  onError: (dir: string, error: unknown) => void = () => undefined,
): Promise<NodeFilesystem[]> {
  const byDevice = new Map<string, { fs: FsStat; roles: DiskRole[]; dirs: string[] }>();
  for (const media of dirs) {
    let fs: FsStat;
    try {
      fs = await probe.stat(media.dir);
    } catch (error) {
      onError(media.dir, error);
      continue;
    }
    const entry = byDevice.get(fs.device) ?? { fs, roles: [], dirs: [] };
    if (!entry.roles.includes(media.role)) entry.roles.push(media.role);
    if (!entry.dirs.includes(media.dir)) entry.dirs.push(media.dir);
    byDevice.set(fs.device, entry);
  }
  return [...byDevice.values()].map(({ fs, roles, dirs: held }) => ({
    key: keys.sharedName !== undefined && roles.includes('recordings') ? `shared:${keys.sharedName}` : `${keys.nodeId}:${fs.device}`,
    mount: fs.mount,
    roles,
    dirs: held,
    totalBytes: fs.totalBytes,
    freeBytes: fs.freeBytes,
  }));
}

/** Linux's dev_t split into `major:minor`, as /proc/self/mountinfo writes it. */
export function deviceName(dev: bigint): string {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return `${major}:${minor}`;
}

/** The mount point of `device` that holds `path`: the longest one that is a prefix of it. */
export function mountOf(mountinfo: string, device: string, path: string): string | undefined {
  let best: string | undefined;
  for (const line of mountinfo.split('\n')) {
    const fields = line.split(' ');
    if (fields[2] !== device || fields[4] === undefined) continue;
    const mount = fields[4].replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
    const inside = mount === '/' || path === mount || path.startsWith(`${mount}/`);
    if (inside && (best === undefined || mount.length > best.length)) best = mount;
  }
  return best;
}

/**
 * statfs(2) of a media directory. A directory not created yet (no recording so far) is measured
 * on its nearest existing parent, which is where its files will land.
 */
export class StatfsProbe implements FilesystemProbe {
  constructor(private readonly mountinfoPath = '/proc/self/mountinfo') {}

  async stat(dir: string): Promise<FsStat> {
    const path = await realpath(await existingAncestor(dir));
    const [fs, st, mountinfo] = await Promise.all([
      statfs(path, { bigint: true }),
      stat(path, { bigint: true }),
      readFile(this.mountinfoPath, 'utf8').catch(() => ''),
    ]);
    const device = deviceName(st.dev);
    return {
      device,
      mount: mountOf(mountinfo, device, path) ?? path,
      totalBytes: Number(fs.blocks * fs.bsize),
      freeBytes: Number(fs.bavail * fs.bsize),
    };
  }
}

async function existingAncestor(dir: string): Promise<string> {
  let current = dir;
  for (;;) {
    try {
      await stat(current);
      return current;
    } catch (error) {
      const parent = dirname(current);
      if (parent === current) throw error;
      current = parent;
    }
  }
}

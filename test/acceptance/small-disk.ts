import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Installed } from './installed.js';

const run = promisify(execFile);

/** A small filesystem over an installed node's recordings directory, as an operator's full disk. */
export type SmallDisk = Readonly<{
  dir: string;
  /** statfs of the filesystem, as the services see it. */
  usage(): Promise<Readonly<{ totalBytes: number; freeBytes: number }>>;
  /** Another process takes the space, leaving about `freeBytes` free. */
  fillLeaving(freeBytes: number): Promise<void>;
  /** That other process gives back all it took. */
  emptyFillers(): Promise<void>;
  /** Bytes egress has written so far for the recording (its files in the incoming directory). */
  writtenBy(appId: string, recordingId: string): Promise<number>;
  /** Whether a file exists at a recording's `location`, as the services see the directory. */
  holds(location: string): Promise<boolean>;
  /** Unmounts it: the directory's own contents show again. */
  remove(): Promise<void>;
}>;

/**
 * Mounts a tmpfs of `sizeMb` over the installed node's recordings directory, in the mount namespace
 * the services run in (that of the worker's supervisor: a mount made in another namespace would not
 * reach them), owned like the directory it covers (egress writes it as the media user, the worker
 * as a member of its group).
 */
export async function smallRecordingsDisk(node: Installed, sizeMb: number): Promise<SmallDisk> {
  const dir = node.env['TALLY_RECORDINGS_DIR'] ?? join(node.home, 'recordings');
  const pid = readFileSync(join(node.home, 'run', 'worker.pid'), 'utf8').trim();
  const inServices = (command: string, ...args: string[]) => run('nsenter', ['-t', pid, '-m', command, ...args]);
  const owner = statSync(dir);
  const mode = (owner.mode & 0o7777).toString(8);
  await inServices('mount', '-t', 'tmpfs', '-o', `size=${sizeMb}m,uid=${owner.uid},gid=${owner.gid},mode=${mode}`, 'tmpfs', dir);
  await inServices('install', '-d', '-o', String(owner.uid), '-g', String(owner.gid), '-m', mode, join(dir, '.incoming'));
  let fillers = 0;
  const usage = async () => {
    const { stdout } = await inServices('stat', '-f', '-c', '%b %a %S', dir);
    const [blocks = 0, available = 0, size = 0] = stdout.trim().split(' ').map(Number);
    return { totalBytes: blocks * size, freeBytes: available * size };
  };
  return {
    dir,
    usage,
    async fillLeaving(freeBytes) {
      const take = (await usage()).freeBytes - freeBytes;
      if (take > 0) await inServices('fallocate', '-l', String(take), join(dir, `.filler-${(fillers += 1)}`));
    },
    async emptyFillers() {
      await inServices('find', dir, '-maxdepth', '1', '-name', '.filler-*', '-delete');
    },
    async writtenBy(appId, recordingId) {
      const incoming = join(dir, '.incoming', appId);
      const { stdout } = await inServices('find', incoming, '-maxdepth', '1', '-name', `${recordingId}*`, '-printf', '%s\n').catch(() => ({
        stdout: '',
      }));
      return stdout
        .split('\n')
        .filter((l) => l !== '')
        .reduce((sum, l) => sum + Number(l), 0);
    },
    async holds(location) {
      return inServices('test', '-e', join(dir, location)).then(
        () => true,
        () => false,
      );
    },
    async remove() {
      // Lazily: an egress that still holds a file open must not keep the node's real directory hidden.
      await inServices('umount', '--lazy', dir);
    },
  };
}

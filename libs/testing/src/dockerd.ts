import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { startChild } from './child.js';
import { waitFor } from './ports.js';

export type TestDockerd = Readonly<{
  socketPath: string;
  docker: Docker;
  /** Imports a busybox-static rootfs as `repo:tag` (no registry, ~0.5 s). */
  importBusybox(image: string): Promise<void>;
  stop(): Promise<void>;
}>;

/**
 * A throwaway Docker engine (Debian's docker.io) on its own socket and data root, as
 * toolchain.md runs it here: no iptables, no default bridge (containers use host or no network),
 * cgroupfs driver.
 */
export async function startDockerd(): Promise<TestDockerd> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-dockerd-'));
  const socketPath = join(dir, 'docker.sock');
  const child = startChild(
    'dockerd',
    [
      ...['--iptables=false', '--ip6tables=false', '--bridge=none', '--storage-driver=overlay2'],
      ...['--exec-opt', 'native.cgroupdriver=cgroupfs', '--data-root', join(dir, 'data'), '--exec-root', join(dir, 'exec')],
      ...['--pidfile', join(dir, 'docker.pid'), '-H', `unix://${socketPath}`],
    ],
    join(dir, 'dockerd.log'),
  );
  const docker = new Docker({ socketPath });
  await waitFor('dockerd', async () => ((await docker.ping().catch(() => undefined)) ? true : undefined), 30_000);
  return {
    socketPath,
    docker,
    async importBusybox(image: string) {
      const rootfs = join(dir, 'busybox-rootfs');
      mkdirSync(join(rootfs, 'bin'), { recursive: true });
      mkdirSync(join(rootfs, 'tmp'), { recursive: true });
      copyFileSync('/bin/busybox', join(rootfs, 'bin', 'busybox'));
      for (const applet of ['sh', 'sleep', 'tail', 'echo', 'cat', 'ls']) symlinkSync('busybox', join(rootfs, 'bin', applet));
      const tar = spawn('tar', ['-C', rootfs, '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
      const [repo, tag] = image.split(':') as [string, string | undefined];
      const stream = await docker.importImage(tar.stdout, { repo, tag: tag ?? 'latest' });
      await new Promise<void>((resolve, reject) => docker.modem.followProgress(stream, (error) => (error ? reject(error) : resolve())));
    },
    async stop() {
      await child.stop();
      // dockerd leaves its network namespace file mounted under the exec root.
      const mounts = readFileSync('/proc/self/mounts', 'utf8')
        .split('\n')
        .map((line) => line.split(' ')[1] ?? '');
      for (const mount of mounts.filter((m) => m.startsWith(dir)).reverse()) spawnSync('umount', ['-l', mount]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

import { describe, expect, it } from 'vitest';
import { cgroupDirs, parseCfsQuota, parseCgroupMounts, parseCpuMax, parseMemoryLimit, parseProcSelfCgroup, tightest } from './cgroup.js';

const HYBRID_MOUNTINFO = `23 1 0:21 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate`;

const DOCKER_V2_MOUNTINFO = `611 610 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw`;

describe(parseCgroupMounts.name, () => {
  it('finds v1 controllers and the v2 mount, skipping other file systems', () => {
    const sut = parseCgroupMounts(HYBRID_MOUNTINFO);

    expect(sut).toEqual([
      { version: 1, mountPoint: '/sys/fs/cgroup/cpu,cpuacct', root: '/', controllers: ['rw', 'cpu', 'cpuacct'] },
      { version: 1, mountPoint: '/sys/fs/cgroup/memory', root: '/', controllers: ['rw', 'memory'] },
      { version: 2, mountPoint: '/sys/fs/cgroup/unified', root: '/', controllers: [] },
    ]);
  });

  it('reads the container-only v2 mount docker gives', () => {
    expect(parseCgroupMounts(DOCKER_V2_MOUNTINFO)).toEqual([{ version: 2, mountPoint: '/sys/fs/cgroup', root: '/', controllers: [] }]);
  });
});

describe(parseProcSelfCgroup.name, () => {
  it('splits the v2 path from per-controller v1 paths', () => {
    const sut = parseProcSelfCgroup('12:cpu,cpuacct:/kubepods/pod1\n4:memory:/kubepods/pod1\n1:name=systemd:/\n0::/user.slice\n');

    expect(sut.unified).toBe('/user.slice');
    expect(sut.controllers.get('cpu')).toBe('/kubepods/pod1');
    expect(sut.controllers.get('memory')).toBe('/kubepods/pod1');
  });
});

describe(cgroupDirs.name, () => {
  const mount = { version: 2 as const, mountPoint: '/sys/fs/cgroup', root: '/', controllers: [] };

  it('walks from the process cgroup up to the mount point, where ancestor limits live', () => {
    expect(cgroupDirs(mount, '/system.slice/tally-agent.service')).toEqual([
      '/sys/fs/cgroup/system.slice/tally-agent.service',
      '/sys/fs/cgroup/system.slice',
      '/sys/fs/cgroup',
    ]);
  });

  it('maps a host path onto a mount of a sub-tree (a container without a cgroup namespace)', () => {
    expect(cgroupDirs({ ...mount, root: '/docker/abc' }, '/docker/abc')).toEqual(['/sys/fs/cgroup']);
    expect(cgroupDirs({ ...mount, root: '/docker/abc' }, '/docker/abc/inner')).toEqual(['/sys/fs/cgroup/inner', '/sys/fs/cgroup']);
  });

  it('falls back to the mount point for a path outside the mounted tree', () => {
    expect(cgroupDirs({ ...mount, root: '/docker/abc' }, '/elsewhere')).toEqual(['/sys/fs/cgroup']);
  });
});

describe('cgroup limit files', () => {
  it('reads a v2 CPU quota and treats "max" as none', () => {
    expect(parseCpuMax('150000 100000\n')).toBe(1_500);
    expect(parseCpuMax('max 100000\n')).toBeUndefined();
  });

  it('reads a v1 CFS quota and treats -1 as none', () => {
    expect(parseCfsQuota('200000\n', '100000\n')).toBe(2_000);
    expect(parseCfsQuota('-1\n', '100000\n')).toBeUndefined();
  });

  it('reads memory limits; "max" is none and the v1 "unlimited" number loses to real RAM', () => {
    expect(parseMemoryLimit('4294967296\n')).toBe(4 * 1024 ** 3);
    expect(parseMemoryLimit('max\n')).toBeUndefined();
    expect(tightest([24 * 1024 ** 3, parseMemoryLimit('9223372036854771712\n')])).toBe(24 * 1024 ** 3);
  });

  it('takes the tightest of the limits that are set', () => {
    expect(tightest([undefined, 3, 2, undefined])).toBe(2);
    expect(tightest([undefined])).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { deviceName, measureFilesystems, mountOf, type FilesystemProbe, type FsStat } from './filesystems.js';

const MB = 1024 * 1024;

function fakeProbe(byDir: Readonly<Record<string, FsStat>>): FilesystemProbe {
  return {
    stat: (dir) => {
      const fs = byDir[dir];
      return fs === undefined ? Promise.reject(new Error(`ENOENT: ${dir}`)) : Promise.resolve(fs);
    },
  };
}

const data: FsStat = { device: '259:2', mount: '/var/lib/tally', totalBytes: 160_000 * MB, freeBytes: 90_000 * MB };
const small: FsStat = { device: '0:57', mount: '/srv/hls', totalBytes: 64 * MB, freeBytes: 60 * MB };

describe(measureFilesystems.name, () => {
  it('lists each filesystem once with every role and directory on it', async () => {
    const sut = await measureFilesystems(
      fakeProbe({ '/var/lib/tally/recordings': data, '/srv/hls': small, '/var/lib/tally/workers': data }),
      [
        { role: 'recordings', dir: '/var/lib/tally/recordings' },
        { role: 'hls', dir: '/srv/hls' },
        { role: 'ladders', dir: '/var/lib/tally/recordings' },
        { role: 'scratch', dir: '/var/lib/tally/workers' },
      ],
      { nodeId: 'n1' },
    );

    expect(sut).toEqual([
      {
        key: 'n1:259:2',
        mount: '/var/lib/tally',
        roles: ['recordings', 'ladders', 'scratch'],
        dirs: ['/var/lib/tally/recordings', '/var/lib/tally/workers'],
        totalBytes: 160_000 * MB,
        freeBytes: 90_000 * MB,
      },
      { key: 'n1:0:57', mount: '/srv/hls', roles: ['hls'], dirs: ['/srv/hls'], totalBytes: 64 * MB, freeBytes: 60 * MB },
    ]);
  });

  it('names a recordings filesystem the operator declared shared by its shared name, so nodes share its counter', async () => {
    const sut = await measureFilesystems(
      fakeProbe({ '/mnt/media': data, '/srv/hls': small }),
      [
        { role: 'recordings', dir: '/mnt/media' },
        { role: 'hls', dir: '/srv/hls' },
      ],
      { nodeId: 'n2', sharedName: 'media' },
    );

    expect(sut.map((f) => f.key)).toEqual(['shared:media', 'n2:0:57']);
  });

  it('leaves out a directory it cannot measure and says which', async () => {
    const errors: string[] = [];
    const sut = await measureFilesystems(
      fakeProbe({ '/srv/hls': small }),
      [
        { role: 'recordings', dir: '/gone' },
        { role: 'hls', dir: '/srv/hls' },
      ],
      { nodeId: 'n1' },
      (dir) => errors.push(dir),
    );

    expect(sut.map((f) => f.roles)).toEqual([['hls']]);
    expect(errors).toEqual(['/gone']);
  });
});

describe(deviceName.name, () => {
  it('splits a Linux dev_t into major:minor', () => {
    expect(deviceName(0x10302n)).toBe('259:2');
    expect(deviceName(57n)).toBe('0:57');
  });
});

describe(mountOf.name, () => {
  const mountinfo = [
    '22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw',
    '90 22 0:57 / /srv/my\\040hls rw,nosuid - tmpfs tmpfs rw,size=65536k',
    '91 22 259:2 /data /var/lib/tally rw - ext4 /dev/nvme0n1p2 rw',
  ].join('\n');

  it('finds the deepest mount of the device holding the path', () => {
    expect(mountOf(mountinfo, '259:2', '/var/lib/tally/recordings')).toBe('/var/lib/tally');
    expect(mountOf(mountinfo, '259:2', '/home/x')).toBe('/');
    expect(mountOf(mountinfo, '0:57', '/srv/my hls/live')).toBe('/srv/my hls');
    expect(mountOf(mountinfo, '0:99', '/srv')).toBeUndefined();
  });
});

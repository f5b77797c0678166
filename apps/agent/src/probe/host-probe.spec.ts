import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LinuxHostProbe } from './host-probe.js';

const GIB = 1024 ** 3;

describe(LinuxHostProbe.name, () => {
  let root: string;
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  const link = (path: string, target: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    symlinkSync(target, join(root, path));
  };
  const script = (name: string, body: string) => {
    write(name, `#!/bin/sh\n${body}\n`);
    chmodSync(join(root, name), 0o755);
    return join(root, name);
  };
  const stat = (busy: number, idle: number) => `cpu  ${busy} 0 0 ${idle} 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0 0 0\n`;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'tally-probe-'));
    // A systemd service on a cgroup v2 host: 1.5 CPUs on the slice, 4 GiB on the service, 16 GiB of RAM.
    write('proc/meminfo', `MemTotal: ${16 * 1024 * 1024} kB\nMemAvailable: ${12 * 1024 * 1024} kB\n`);
    write('proc/stat', stat(1000, 9000));
    write('proc/self/cgroup', '0::/system.slice/tally-agent.service\n');
    write('proc/self/mountinfo', '30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n');
    write('sys/fs/cgroup/system.slice/tally-agent.service/memory.max', `${4 * GIB}\n`);
    write('sys/fs/cgroup/system.slice/tally-agent.service/cpu.max', 'max 100000\n');
    write('sys/fs/cgroup/system.slice/memory.max', 'max\n');
    write('sys/fs/cgroup/system.slice/cpu.max', '150000 100000\n');
    // One 10 GbE card, one 1 GbE card, loopback and a bridge.
    write('sys/devices/pci0000:00/0000:00:03.0/net/eno1/speed', '10000\n');
    write('sys/devices/pci0000:00/0000:00:04.0/net/eno2/speed', '1000\n');
    write('sys/devices/virtual/net/lo/speed', '100000\n');
    write('sys/devices/virtual/net/br0/speed', '40000\n');
    link('sys/class/net/eno1', '../../devices/pci0000:00/0000:00:03.0/net/eno1');
    link('sys/class/net/eno2', '../../devices/pci0000:00/0000:00:04.0/net/eno2');
    link('sys/class/net/lo', '../../devices/virtual/net/lo');
    link('sys/class/net/br0', '../../devices/virtual/net/br0');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const probe = (nvidiaSmi: string) => new LinuxHostProbe({ root, nvidiaSmi, nvencUnlimitedCap: 32, cores: () => 8, firstSampleGapMs: 0 });

  it('measures the budget within the cgroup limits, the fastest physical NIC and the GPUs', async () => {
    const sut = probe(script('nvidia-smi', "printf 'NVIDIA GeForce RTX 4090, 550.54.14\\nNVIDIA L4, 550.54.14\\n'"));

    expect(await sut.budget()).toEqual({
      cpuMillicores: 1_500,
      ramMb: 4_096,
      nicMbps: 10_000,
      gpus: [
        { name: 'NVIDIA GeForce RTX 4090', nvencSessions: 8 },
        { name: 'NVIDIA L4', nvencSessions: 32 },
      ],
      warnings: [],
    });
  });

  it('counts no GPU without nvidia-smi, and warns when nvidia-smi is there but fails', async () => {
    expect((await probe(join(root, 'absent')).budget()).gpus).toEqual([]);

    const failing = await probe(script('nvidia-smi', 'echo "NVIDIA-SMI has failed" >&2; exit 9')).budget();
    expect(failing.gpus).toEqual([]);
    expect(failing.warnings).toEqual([expect.stringContaining('nvidia-smi failed')]);
  });

  it('uses the whole machine when no cgroup limit is set and no NIC reports a speed', async () => {
    rmSync(join(root, 'sys'), { recursive: true });
    const sut = await probe(join(root, 'absent')).budget();

    expect(sut).toMatchObject({ cpuMillicores: 8_000, ramMb: 16_384, nicMbps: undefined });
  });

  it('reports host usage: RAM not available, CPU between consecutive samples', async () => {
    const sut = probe(join(root, 'absent'));

    expect(await sut.usage()).toEqual({ cpuMillicores: 0, ramMb: 4_096 });
    write('proc/stat', stat(1000 + 500, 9000 + 500)); // half of 2 CPUs busy since the last sample
    expect(await sut.usage()).toEqual({ cpuMillicores: 1_000, ramMb: 4_096 });
  });
});

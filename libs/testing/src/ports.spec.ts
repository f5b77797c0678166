import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from './ports.js';

describe(freePort.name, () => {
  it('hands out distinct ports below the ephemeral range, each bindable for TCP and UDP', async () => {
    const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = [];
    for (let i = 0; i < 50; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(50);
    for (const port of ports) expect(port).toBeLessThan(ephemeralStart);

    const port = ports[0]!;
    const tcp = createServer();
    await new Promise<void>((resolve) => tcp.listen(port, '0.0.0.0', resolve));
    const udp = createSocket('udp4');
    await new Promise<void>((resolve) => udp.bind(port, '0.0.0.0', resolve));
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
    await new Promise<void>((resolve) => udp.close(() => resolve()));
  });
});

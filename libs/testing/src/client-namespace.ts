import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type ClientNamespace = Readonly<{
  /** The network namespace, under /run/netns. */
  name: string;
  /** The client's own address; its default route leads to the namespace the test runs in. */
  address: string;
  stop(): Promise<void>;
}>;

export type Firewall = Readonly<{
  /** TCP ports the client may connect to; every other TCP port is refused. All ports when absent. */
  tcpPorts?: readonly number[];
}>;

let created = 0;

/**
 * A network namespace for one client, behind a firewall like a restrictive corporate or hotel
 * network's: every UDP packet is dropped both ways, and outgoing TCP may be limited to some ports.
 * A veth pair joins it to the test's namespace, where the media address is local.
 */
export async function startClientNamespace(firewall: Firewall = {}): Promise<ClientNamespace> {
  const n = created++;
  const name = `tally-client-${process.pid}-${n}`;
  const outside = `tc${process.pid % 10_000}x${n}`;
  // A range no other test network uses (npm test 10.231, bench 10.232, joined nodes 10.233, installs 10.234-235).
  const subnet = `10.236.${n % 250}`;
  const inNs = (command: string, ...args: string[]) => run('nsenter', [`--net=/run/netns/${name}`, command, ...args]);
  await run('ip', ['netns', 'add', name]);
  try {
    await run('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
    await run('ip', ['link', 'add', outside, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name]);
    await run('ip', ['addr', 'add', `${subnet}.1/30`, 'dev', outside]);
    await run('ip', ['link', 'set', outside, 'up']);
    await run('ip', ['-n', name, 'addr', 'add', `${subnet}.2/30`, 'dev', 'eth0']);
    await run('ip', ['-n', name, 'link', 'set', 'eth0', 'up']);
    await run('ip', ['-n', name, 'route', 'add', 'default', 'via', `${subnet}.1`]);
    await inNs('iptables', '-A', 'INPUT', '-p', 'udp', '!', '-i', 'lo', '-j', 'DROP');
    await inNs('iptables', '-A', 'OUTPUT', '-p', 'udp', '!', '-o', 'lo', '-j', 'DROP');
    if (firewall.tcpPorts) {
      for (const port of firewall.tcpPorts) await inNs('iptables', '-A', 'OUTPUT', '-p', 'tcp', '--dport', String(port), '-j', 'ACCEPT');
      await inNs('iptables', '-A', 'OUTPUT', '-p', 'tcp', '!', '-o', 'lo', '-j', 'REJECT', '--reject-with', 'tcp-reset');
    }
  } catch (error) {
    await run('ip', ['netns', 'del', name]).catch(() => undefined);
    throw error;
  }
  return {
    name,
    address: `${subnet}.2`,
    async stop() {
      await run('ip', ['netns', 'del', name]).catch(() => undefined);
    },
  };
}

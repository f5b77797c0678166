import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { promisify } from 'node:util';

export type TcpListener = Readonly<{ address: string; port: number; pid: number }>;

/** The pids whose process group is `pgid` (a worker and the handlers it started). */
function groupPids(pgid: number): Set<number> {
  const pids = new Set<number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the parenthesised command: state, ppid, pgrp.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (pgrp === pgid) pids.add(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** Every TCP socket a process group listens on in this network namespace, as `ss` reports it. */
export async function tcpListenersOfGroup(pgid: number): Promise<TcpListener[]> {
  const pids = groupPids(pgid);
  const { stdout } = await promisify(execFile)('ss', ['-Hltnp']);
  const found: TcpListener[] = [];
  for (const line of stdout.split('\n')) {
    const local = line.trim().split(/\s+/)[3];
    const match = local === undefined ? null : /^(.*):(\d+)$/.exec(local);
    if (!match) continue;
    for (const [, pid] of line.matchAll(/pid=(\d+)/g)) {
      if (pids.has(Number(pid))) found.push({ address: match[1] ?? '', port: Number(match[2]), pid: Number(pid) });
    }
  }
  return found;
}

/** Whether a TCP connection to host:port is accepted (a refusal or any error is false). */
export function acceptsTcp(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

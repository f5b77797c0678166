import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Ports handed out by this process: never twice, even after the service on one stopped. */
const handedOut = new Set<number>();
const LOWEST = 20_000;

/** The first port of the kernel's ephemeral range, where outgoing connections take their local ports. */
function ephemeralStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > LOWEST + 1_000 ? start : 32_768;
  } catch {
    return 32_768;
  }
}

function tcpFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}

function udpFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.once('error', () => resolve(false));
    socket.bind(port, '0.0.0.0', () => socket.close(() => resolve(true)));
  });
}

/**
 * A port free right now for TCP and UDP on every address, for a service a test starts.
 *
 * Chosen below the ephemeral range, never from it: a port picked there (the OS's choice for
 * port 0) is released before the service binds it, and any outgoing connection may take it as
 * its local port meanwhile (or whenever a supervised service restarts), so the service would fail
 * to bind it; port 0 may also hand the same number out twice, and a TCP check says nothing about
 * the UDP ports livekit-server and ingress bind.
 */
export async function freePort(): Promise<number> {
  const end = ephemeralStart();
  for (let attempt = 0; attempt < 2_000; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (end - LOWEST));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if ((await tcpFree(port)) && (await udpFree(port))) return port;
  }
  throw new Error(`no free port between ${LOWEST} and ${end}`);
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${lastError instanceof Error ? `: ${lastError.message}` : ''}`);
}

import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where scripts/provision.sh puts livekit-server, lk and the object store. */
export function toolPath(name: 'livekit-server' | 'lk' | 'versitygw'): string {
  const dir = process.env['TALLY_TOOLS_DIR'] ?? join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'tally', 'tools');
  const path = join(dir, 'bin', name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run scripts/provision.sh (npm test does)`);
  return path;
}

/**
 * The address media is announced on. WebRTC clients here ignore loopback
 * candidates, so npm test runs everything in a network namespace with a veth
 * address (scripts/test.sh) and passes it in TALLY_TEST_NODE_IP.
 */
export function mediaNodeIp(): string {
  const ip = process.env['TALLY_TEST_NODE_IP'];
  if (!ip) throw new Error('TALLY_TEST_NODE_IP is not set: run media tests through npm test (scripts/test.sh)');
  return ip;
}

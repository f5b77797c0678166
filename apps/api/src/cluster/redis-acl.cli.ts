import { NodeId } from '@tally/contracts';
import { originMediaUserLine } from './node-grants.js';

/**
 * `node dist/redis-acl.js <origin node id> <password sha256>`: prints the redis.conf `user` line of
 * the origin's agent, egress, ingress and livekit-server (install.sh writes it into redis.conf).
 */
const [nodeId, sha256] = process.argv.slice(2);
if (!NodeId.safeParse(nodeId).success || !/^[0-9a-f]{64}$/.test(sha256 ?? '')) {
  process.stderr.write('usage: redis-acl.js <node id> <password sha256, 64 hex characters>\n');
  process.exit(2);
}
process.stdout.write(`${originMediaUserLine(nodeId ?? '', sha256 ?? '')}\n`);

/**
 * TURN over TLS on an installed node, as a client behind a UDP-dropping firewall meets it
 * (scripts/install-hosts.int.sh): through https://BASE it creates an app, a key, a stream and a
 * publisher token, as an app would; joins LiveKit's signalling (wss://) with that token and takes
 * the ICE servers from LiveKit's join response, as every LiveKit client does; then, trusting only
 * CA_FILE, opens TLS to the announced `turns:` server, allocates a relay with the announced
 * credentials, and asks for permissions towards the node's media address (granted) and another
 * address (refused); on a second connection it asks for a TCP relay (RFC 6062), which must be
 * refused (442: coturn relays over UDP only). It also checks that the same server is refused by a
 * client that trusts only the public roots. With JOINED_IP (a joined media node's address the origin lists in
 * TALLY_TURN_ALLOWED_PEERS), a permission towards it must be granted too. Prints one JSON line; exit
 * 0 = all of that held.
 *
 * Usage: node --import @swc-node/register/esm-register scripts/install-hosts/turn-over-tls.ts BASE_URL ADMIN_KEY_FILE CA_FILE NODE_IP [JOINED_IP]
 * (NODE_EXTRA_CA_CERTS=CA_FILE for the HTTPS and WebSocket calls.)
 */
import { readFileSync } from 'node:fs';
import { iceServersFromJoin } from '@tally/testing/livekit-join';
import { connectTurnTls } from '@tally/testing/turn';
import { apiCaller } from './api-call.js';

const [base, adminKeyFile, caFile, nodeIp, joinedIp] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const adminKey = readFileSync(adminKeyFile, 'utf8').trim();
const ca = readFileSync(caFile);
/** An address outside the node (TEST-NET-2): a relay must not reach it. */
const ELSEWHERE = '198.51.100.7';

const call = apiCaller(base);

const app = await call(adminKey, 'POST', '/v1/apps', 201, { name: 'turn-over-tls' });
const appId = String(app.id);
const key = String((await call(adminKey, 'POST', `/v1/apps/${appId}/keys`, 201)).key);
const stream = await call(key, 'POST', `/v1/apps/${appId}/streams`, 201, { name: 'behind-a-firewall' });
const token = await call(key, 'POST', `/v1/apps/${appId}/streams/${String(stream.id)}/tokens`, 201, {
  identity: 'firewalled',
  role: 'publisher',
});
const iceServers = await iceServersFromJoin(String(token.url), String(token.token));
const turns = iceServers.flatMap((s) => s.urls.filter((u) => u.startsWith('turns:')).map((u) => ({ url: u, server: s })));
if (turns.length !== 1)
  throw new Error(`expected one turns: URL in the join response, got ${JSON.stringify(iceServers.flatMap((s) => s.urls))}`);
const { url: turnsUrl, server } = turns[0]!;
const match = /^turns:([^:?]+):(\d+)\?transport=tcp$/.exec(turnsUrl);
if (match === null) throw new Error(`unexpected TURN/TLS URL: ${turnsUrl}`);
const [, host, port] = match as unknown as [string, string, string];

/** A TLS session with the TURN server, signed in with the credentials LiveKit handed out. */
const connect = () =>
  connectTurnTls({ host, port: Number(port), servername: host, ca, username: server.username, credential: server.credential });
const client = await connect();
let relayed: string | undefined;
try {
  const allocation = await client.allocate();
  if (!allocation.ok) throw new Error(`Allocate over TLS refused: ${allocation.code} ${allocation.reason}`);
  relayed = allocation.relayed;
  if (relayed === undefined || !relayed.startsWith(`${nodeIp}:`))
    throw new Error(`relayed address ${relayed} is not on the node's media address ${nodeIp}`);
  const toNode = await client.createPermission(nodeIp);
  if (!toNode.ok) throw new Error(`permission towards the node's media address refused: ${toNode.code} ${toNode.reason}`);
  if (joinedIp !== undefined) {
    const toJoined = await client.createPermission(joinedIp);
    if (!toJoined.ok) throw new Error(`permission towards the joined node ${joinedIp} refused: ${toJoined.code} ${toJoined.reason}`);
  }
  const elsewhere = await client.createPermission(ELSEWHERE);
  if (elsewhere.ok || elsewhere.code !== 403)
    throw new Error(`permission towards ${ELSEWHERE} was not refused with 403: ${JSON.stringify(elsewhere.ok || elsewhere.code)}`);
} finally {
  client.close();
}

const tcpClient = await connect();
let tcpRelay: number;
try {
  const tcpAllocation = await tcpClient.allocate('tcp');
  if (tcpAllocation.ok) throw new Error(`a TCP relay was allocated (${tcpAllocation.relayed}): coturn must relay over UDP only`);
  tcpRelay = tcpAllocation.code;
  if (tcpRelay !== 442) throw new Error(`a TCP relay was refused with ${tcpRelay} ${tcpAllocation.reason}, not 442`);
} finally {
  tcpClient.close();
}

const publicRoots = readFileSync('/etc/ssl/certs/ca-certificates.crt');
const untrusted = await connectTurnTls({
  host,
  port: Number(port),
  servername: host,
  ca: publicRoots,
  username: server.username,
  credential: server.credential,
}).then(
  (c) => {
    c.close();
    return 'accepted';
  },
  (error: NodeJS.ErrnoException) => error.code ?? error.message,
);
if (untrusted === 'accepted') throw new Error('a client that trusts only the public roots accepted the TURN server certificate');

console.log(
  JSON.stringify({
    turns: turnsUrl,
    relayed,
    permissionToNode: 'granted',
    ...(joinedIp === undefined ? {} : { [`permissionTo${joinedIp}`]: 'granted' }),
    [`permissionTo${ELSEWHERE}`]: 403,
    tcpRelay,
    withoutTheCa: untrusted,
  }),
);
process.exit(0);

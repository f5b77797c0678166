/**
 * A real LiveKit client joining a stream over wss:// through the installed HTTPS proxy
 * (scripts/install-hosts.int.sh): through https://BASE it creates an app, a key, a stream and a
 * publisher token, as an app would; joins with @livekit/rtc-node at the token's URL (wss://), publishes
 * generated media, and waits until the API reports the stream live with that publisher. The
 * caller makes the proxy's CA trusted (NODE_EXTRA_CA_CERTS for fetch, SSL_CERT_FILE for the SDK).
 * Prints one JSON line; exit 0 = joined.
 *
 * Usage: node --import @swc-node/register/esm-register scripts/install-hosts/join-over-tls.ts BASE_URL ADMIN_KEY_FILE
 */
import { readFileSync } from 'node:fs';
import { joinAndPublish } from '@tally/testing/media';
import { apiCaller } from './api-call.js';

const [base, adminKeyFile] = process.argv.slice(2) as [string, string];
const adminKey = readFileSync(adminKeyFile, 'utf8').trim();

const call = apiCaller(base);

const app = await call(adminKey, 'POST', '/v1/apps', 201, { name: 'over-tls' });
const appId = String(app.id);
const key = String((await call(adminKey, 'POST', `/v1/apps/${appId}/keys`, 201)).key);
const stream = await call(key, 'POST', `/v1/apps/${appId}/streams`, 201, { name: 'tls' });
const streamPath = `/v1/apps/${appId}/streams/${String(stream.id)}`;
const token = await call(key, 'POST', `${streamPath}/tokens`, 201, { identity: 'camera', role: 'publisher' });
const url = String(token.url);
if (!url.startsWith('wss://')) throw new Error(`the token's URL is not wss://: ${url}`);
const publisher = await joinAndPublish(url, String(token.token));
try {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const s = await call(key, 'GET', streamPath, 200);
    if (s.status === 'live' && s.publishers === 1) {
      console.log(JSON.stringify({ url, status: s.status, publishers: s.publishers, connection: publisher.room.connectionState }));
      break;
    }
    if (Date.now() > deadline) throw new Error(`the stream did not go live: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
} finally {
  await publisher.stop();
}
process.exit(0);

// Does any STUN server answer? Sends one RFC 5389 Binding Request to each HOST:PORT given and
// prints "ADDRESS SERVER" for the first answer (the mapped address the server saw), exit 0; exit 1
// when none answered within the deadline. Used by install.sh (scripts/install/stun.sh) before it
// lets livekit-server discover its external address through STUN, which it cannot survive without.
//
// Usage: node stun-probe.mjs TIMEOUT_MS HOST:PORT [HOST:PORT...]
import { Buffer } from 'node:buffer';
import console from 'node:console';
import process from 'node:process';
import { setInterval, setTimeout } from 'node:timers';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { lookup } from 'node:dns/promises';

const MAGIC = 0x2112a442;
const [timeoutArg, ...servers] = process.argv.slice(2);
const timeoutMs = Number(timeoutArg);
if (!Number.isFinite(timeoutMs) || timeoutMs <= 0 || servers.length === 0) {
  console.error('usage: node stun-probe.mjs TIMEOUT_MS HOST:PORT [HOST:PORT...]');
  process.exit(2);
}
setTimeout(() => process.exit(1), timeoutMs).unref();

/** The mapped address in a Binding Success Response, or undefined. */
function mappedAddress(msg, id) {
  if (msg.length < 20 || msg.readUInt16BE(0) !== 0x0101 || msg.readUInt32BE(4) !== MAGIC || !msg.subarray(8, 20).equals(id))
    return undefined;
  let at = 20;
  const end = Math.min(msg.length, 20 + msg.readUInt16BE(2));
  let plain;
  while (at + 4 <= end) {
    const type = msg.readUInt16BE(at);
    const length = msg.readUInt16BE(at + 2);
    const value = msg.subarray(at + 4, at + 4 + length);
    if (value.length >= 8 && value[1] === 0x01) {
      const octets = [...value.subarray(4, 8)];
      // XOR-MAPPED-ADDRESS is masked with the magic cookie; MAPPED-ADDRESS is plain.
      if (type === 0x0020) return octets.map((b, i) => b ^ ((MAGIC >>> (24 - 8 * i)) & 0xff)).join('.');
      if (type === 0x0001) plain = octets.join('.');
    }
    at += 4 + length + ((4 - (length % 4)) % 4);
  }
  return plain;
}

const socket = createSocket('udp4');
socket.on('error', () => {});
const pending = new Map(); // transaction id (hex) -> server
socket.on('message', (msg) => {
  const id = msg.subarray(8, 20);
  const server = pending.get(id.toString('hex'));
  const address = server && mappedAddress(msg, id);
  if (address) {
    console.log(`${address} ${server}`);
    process.exit(0);
  }
});

let unresolved = servers.length;
// Where no name resolves (no resolver, no route) nobody can answer: say so at once.
const lookupFailed = () => {
  if (--unresolved === 0) process.exit(1);
};

socket.bind(0, () => {
  for (const server of servers) {
    const match = /^(.+):(\d+)$/.exec(server);
    if (!match) {
      lookupFailed();
      continue;
    }
    const [, host, port] = match;
    const id = randomBytes(12);
    pending.set(id.toString('hex'), server);
    const request = Buffer.alloc(20);
    request.writeUInt16BE(0x0001, 0);
    request.writeUInt16BE(0, 2);
    request.writeUInt32BE(MAGIC, 4);
    id.copy(request, 8);
    // All servers at once; UDP may drop a packet, so each is asked again every 500 ms until the
    // deadline. A lookup fails fast where there is no resolver.
    lookup(host, { family: 4 }).then(
      ({ address }) => {
        const send = () => socket.send(request, Number(port), address, () => {});
        send();
        setInterval(send, 500).unref();
      },
      () => lookupFailed(),
    );
  }
});

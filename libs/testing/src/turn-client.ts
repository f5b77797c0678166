/**
 * A minimal TURN client (RFC 8656) over TLS, as a client behind a UDP-dropping firewall uses a relay:
 * it allocates a relayed address with the long-term credentials LiveKit handed it, then asks for
 * permissions towards peers. Enough to prove that a TURN/TLS server is reachable on the announced
 * port with a certificate the client trusts, accepts the credentials, and relays only where it may.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { connect, type TLSSocket } from 'node:tls';

const MAGIC_COOKIE = 0x2112a442;
const HEADER_BYTES = 20;

export const StunMethod = { allocate: 0x003, createPermission: 0x008, refresh: 0x004 } as const;
export const StunAttr = {
  username: 0x0006,
  messageIntegrity: 0x0008,
  errorCode: 0x0009,
  lifetime: 0x000d,
  xorPeerAddress: 0x0012,
  realm: 0x0014,
  nonce: 0x0015,
  xorRelayedAddress: 0x0016,
  requestedTransport: 0x0019,
} as const;

export type StunMessage = Readonly<{
  method: number;
  /** 0 request, 2 success response, 3 error response. */
  cls: number;
  transactionId: Buffer;
  attributes: ReadonlyMap<number, Buffer>;
}>;

export type TurnAnswer = Readonly<{ ok: true; message: StunMessage } | { ok: false; code: number; reason: string; message: StunMessage }>;

function messageType(method: number, cls: number): number {
  return (method & 0x000f) | ((method & 0x0070) << 1) | ((method & 0x0f80) << 2) | ((cls & 1) << 4) | ((cls & 2) << 7);
}

function attribute(type: number, value: Buffer): Buffer {
  const padded = Buffer.alloc(4 + Math.ceil(value.length / 4) * 4);
  padded.writeUInt16BE(type, 0);
  padded.writeUInt16BE(value.length, 2);
  value.copy(padded, 4);
  return padded;
}

/** Encodes a request; with `key`, MESSAGE-INTEGRITY (HMAC-SHA1 over the message up to it) closes it. */
export function encodeRequest(method: number, attributes: ReadonlyArray<readonly [number, Buffer]>, key?: Buffer): Buffer {
  const transactionId = randomBytes(12);
  const body = Buffer.concat(attributes.map(([type, value]) => attribute(type, value)));
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt16BE(messageType(method, 0), 0);
  header.writeUInt32BE(MAGIC_COOKIE, 4);
  transactionId.copy(header, 8);
  if (key === undefined) {
    header.writeUInt16BE(body.length, 2);
    return Buffer.concat([header, body]);
  }
  header.writeUInt16BE(body.length + 24, 2);
  const hmac = createHmac('sha1', key)
    .update(Buffer.concat([header, body]))
    .digest();
  return Buffer.concat([header, body, attribute(StunAttr.messageIntegrity, hmac)]);
}

export function decodeMessage(bytes: Buffer): StunMessage {
  const type = bytes.readUInt16BE(0);
  const length = bytes.readUInt16BE(2);
  if (bytes.readUInt32BE(4) !== MAGIC_COOKIE) throw new Error('not a STUN message (no magic cookie)');
  const method = (type & 0x000f) | ((type & 0x00e0) >> 1) | ((type & 0x3e00) >> 2);
  const cls = ((type & 0x0010) >> 4) | ((type & 0x0100) >> 7);
  const attributes = new Map<number, Buffer>();
  for (let at = HEADER_BYTES; at + 4 <= HEADER_BYTES + length;) {
    const attrType = bytes.readUInt16BE(at);
    const attrLength = bytes.readUInt16BE(at + 2);
    if (!attributes.has(attrType)) attributes.set(attrType, bytes.subarray(at + 4, at + 4 + attrLength));
    at += 4 + Math.ceil(attrLength / 4) * 4;
  }
  return { method, cls, transactionId: bytes.subarray(8, 20), attributes };
}

/** An IPv4 XOR-*-ADDRESS value for `ip:port`. */
export function xorAddress(ip: string, port: number): Buffer {
  const value = Buffer.alloc(8);
  value.writeUInt8(0x01, 1);
  value.writeUInt16BE(port ^ (MAGIC_COOKIE >>> 16), 2);
  const octets = ip.split('.').map(Number);
  if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) throw new Error(`not an IPv4 address: ${ip}`);
  value.writeUInt32BE((Buffer.from(octets).readUInt32BE(0) ^ MAGIC_COOKIE) >>> 0, 4);
  return value;
}

/** Reads an IPv4 XOR-*-ADDRESS value back as `ip:port`. */
export function readXorAddress(value: Buffer): string {
  const port = value.readUInt16BE(2) ^ (MAGIC_COOKIE >>> 16);
  const address = Buffer.alloc(4);
  address.writeUInt32BE((value.readUInt32BE(4) ^ MAGIC_COOKIE) >>> 0, 0);
  return `${[...address].join('.')}:${port}`;
}

function errorOf(message: StunMessage): { code: number; reason: string } {
  const value = message.attributes.get(StunAttr.errorCode);
  if (value === undefined) return { code: 0, reason: 'no ERROR-CODE' };
  return { code: value.readUInt8(2) * 100 + value.readUInt8(3), reason: value.subarray(4).toString('utf8') };
}

export type TurnTlsClient = Readonly<{
  socket: TLSSocket;
  /**
   * Allocates a relay with the long-term credentials (after the server's 401 names realm and
   * nonce): UDP, as WebRTC clients ask, or TCP (RFC 6062), which a server may refuse (442).
   */
  allocate(transport?: 'udp' | 'tcp'): Promise<TurnAnswer & { relayed?: string }>;
  /** Asks the server to let the allocation exchange data with `peerIp`. */
  createPermission(peerIp: string): Promise<TurnAnswer>;
  close(): void;
}>;

/**
 * Opens TLS to a TURN server (`ca`: the only certificates trusted; `servername`: the name checked
 * against the certificate) and speaks TURN with `username` / `credential`.
 */
export async function connectTurnTls(options: {
  host: string;
  port: number;
  servername: string;
  ca: string | Buffer;
  username: string;
  credential: string;
}): Promise<TurnTlsClient> {
  const socket = await new Promise<TLSSocket>((resolve, reject) => {
    const s = connect({ host: options.host, port: options.port, servername: options.servername, ca: options.ca }, () => resolve(s));
    s.once('error', reject);
  });
  let buffered = Buffer.alloc(0);
  const waiting: Array<(m: StunMessage) => void> = [];
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= HEADER_BYTES && buffered.length >= HEADER_BYTES + buffered.readUInt16BE(2)) {
      const size = HEADER_BYTES + buffered.readUInt16BE(2);
      const message = decodeMessage(buffered.subarray(0, size));
      buffered = buffered.subarray(size);
      waiting.shift()?.(message);
    }
  });
  const exchange = (request: Buffer): Promise<StunMessage> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the TURN server did not answer within 20 s')), 20_000);
      waiting.push((m) => {
        clearTimeout(timer);
        resolve(m);
      });
      socket.write(request);
    });
  let realm = '';
  let nonce: Buffer = Buffer.alloc(0);
  const key = (): Buffer => createHash('md5').update(`${options.username}:${realm}:${options.credential}`).digest();
  const answer = (message: StunMessage): TurnAnswer =>
    message.cls === 2 ? { ok: true, message } : { ok: false, ...errorOf(message), message };
  const authenticated = (): Array<[number, Buffer]> => [
    [StunAttr.username, Buffer.from(options.username)],
    [StunAttr.realm, Buffer.from(realm)],
    [StunAttr.nonce, nonce],
  ];
  const protocols = { udp: Buffer.from([17, 0, 0, 0]), tcp: Buffer.from([6, 0, 0, 0]) } as const;
  return {
    socket,
    async allocate(transport = 'udp') {
      const requested = protocols[transport];
      const challenge = await exchange(encodeRequest(StunMethod.allocate, [[StunAttr.requestedTransport, requested]]));
      const { code } = errorOf(challenge);
      if (challenge.cls !== 3 || code !== 401) return answer(challenge);
      realm = challenge.attributes.get(StunAttr.realm)?.toString('utf8') ?? '';
      nonce = challenge.attributes.get(StunAttr.nonce) ?? Buffer.alloc(0);
      const result = answer(
        await exchange(encodeRequest(StunMethod.allocate, [[StunAttr.requestedTransport, requested], ...authenticated()], key())),
      );
      const relayed = result.message.attributes.get(StunAttr.xorRelayedAddress);
      return relayed === undefined ? result : { ...result, relayed: readXorAddress(relayed) };
    },
    async createPermission(peerIp: string) {
      return answer(
        await exchange(
          encodeRequest(StunMethod.createPermission, [[StunAttr.xorPeerAddress, xorAddress(peerIp, 0)], ...authenticated()], key()),
        ),
      );
    },
    close() {
      socket.destroy();
    },
  };
}

import { createSocket, type Socket } from 'node:dgram';

/**
 * A real DNS server on UDP for tests: answers A queries for the names it knows, answers other
 * known-name queries with no records, and never answers a black-holed name (a resolver then waits
 * for its own timeout). Counts the queries it saw per name.
 */
export class TestDnsServer {
  readonly queries = new Map<string, number>();
  private readonly socket: Socket = createSocket('udp4');

  private constructor(
    private readonly records: ReadonlyMap<string, string>,
    private readonly blackHoled: ReadonlySet<string>,
  ) {
    this.socket.on('message', (message, from) => {
      const question = parseQuestion(message);
      if (question === undefined) return;
      this.queries.set(question.name, (this.queries.get(question.name) ?? 0) + 1);
      if (this.blackHoled.has(question.name)) return;
      this.socket.send(answer(message, question, this.records.get(question.name)), from.port, from.address);
    });
  }

  /** Listens on `host:port` (port 53 when a resolv.conf must point at it: glibc takes no port there). */
  static async start(options: {
    host: string;
    port?: number;
    records: Record<string, string>;
    blackHoled: string[];
  }): Promise<TestDnsServer> {
    const server = new TestDnsServer(new Map(Object.entries(options.records)), new Set(options.blackHoled));
    await new Promise<void>((resolve, reject) => {
      server.socket.once('error', reject);
      server.socket.bind(options.port ?? 0, options.host, () => resolve());
    });
    return server;
  }

  get address(): string {
    const { address, port } = this.socket.address();
    return `${address}:${port}`;
  }

  /** Queries seen for `name`. */
  seen(name: string): number {
    return this.queries.get(name) ?? 0;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }
}

type Question = { name: string; type: number; end: number };

function parseQuestion(message: Buffer): Question | undefined {
  if (message.length < 12 || message.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let at = 12;
  while (at < message.length && message[at] !== 0) {
    const length = message[at]!;
    labels.push(message.subarray(at + 1, at + 1 + length).toString('ascii'));
    at += 1 + length;
  }
  if (at + 5 > message.length) return undefined;
  return { name: labels.join('.').toLowerCase(), type: message.readUInt16BE(at + 1), end: at + 5 };
}

/** The query's header and question, flagged as an authoritative answer, with one A record when there is one. */
function answer(query: Buffer, question: Question, ipv4: string | undefined): Buffer {
  const withRecord = question.type === 1 && ipv4 !== undefined;
  const header = Buffer.from(query.subarray(0, 12));
  header.writeUInt16BE(0x8400 | (query.readUInt16BE(2) & 0x0100) | (ipv4 === undefined ? 3 : 0), 2); // QR, AA, RD; NXDOMAIN when unknown
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(withRecord ? 1 : 0, 6);
  header.writeUInt16BE(0, 8);
  header.writeUInt16BE(0, 10);
  const parts = [header, query.subarray(12, question.end)];
  if (withRecord) {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0); // the name in the question
    record.writeUInt16BE(1, 2); // A
    record.writeUInt16BE(1, 4); // IN
    record.writeUInt32BE(30, 6); // TTL
    record.writeUInt16BE(4, 10);
    ipv4.split('.').forEach((octet, i) => record.writeUInt8(Number(octet), 12 + i));
    parts.push(record);
  }
  return Buffer.concat(parts);
}

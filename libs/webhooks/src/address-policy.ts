import type { LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Ranges a webhook may never reach unless the operator allows them: this host, its private
 * networks, and addresses that are not a single public host. IPv6 forms that embed an IPv4 address
 * (mapped, NAT64, 6to4) are checked as that address.
 */
const DENIED_V4 = [
  '0.0.0.0/8', // "this network", unspecified
  '10.0.0.0/8', // RFC 1918
  '100.64.0.0/10', // CGNAT
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local (cloud metadata)
  '172.16.0.0/12', // RFC 1918
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation
  '192.168.0.0/16', // RFC 1918
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation
  '203.0.113.0/24', // documentation
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, broadcast
];
const DENIED_V6 = [
  '::/96', // unspecified, loopback, IPv4-compatible
  '100::/64', // discard
  '2001:db8::/32', // documentation
  'fc00::/7', // unique local (ULA)
  'fe80::/10', // link-local
  'fec0::/10', // site-local
  'ff00::/8', // multicast
];

export class AddressNotAllowedError extends Error {
  readonly code = 'EADDRNOTALLOWED';
}

/** Which addresses webhooks may be delivered to; `allowCidrs` (TALLY_WEBHOOK_ALLOW_CIDRS) wins over the denied ranges. */
export class AddressPolicy {
  private readonly denied = new BlockList();
  private readonly allowed = new BlockList();

  constructor(allowCidrs: readonly string[] = []) {
    for (const cidr of DENIED_V4) addCidr(this.denied, cidr);
    for (const cidr of DENIED_V6) addCidr(this.denied, cidr);
    for (const cidr of allowCidrs) addCidr(this.allowed, cidr);
  }

  /** Whether `address` (an IP literal, IPv6 with or without brackets) may be connected to. */
  allows(address: string): boolean {
    const ip = address.replace(/^\[(.*)\]$/, '$1');
    const family = isIP(ip);
    if (family === 0) return false;
    const embedded = family === 6 ? embeddedIpv4(ip) : undefined;
    const candidates: [string, 'ipv4' | 'ipv6'][] = [[ip, family === 4 ? 'ipv4' : 'ipv6']];
    if (embedded) candidates.unshift([embedded, 'ipv4']);
    if (candidates.some(([a, t]) => this.allowed.check(a, t))) return true;
    return !candidates.some(([a, t]) => this.denied.check(a, t));
  }

  /**
   * Why `url` may not be a webhook URL, or undefined when it may. An IP literal (WHATWG URL parsing
   * has already turned decimal, octal, hex and short IPv4 spellings into dotted quads) is checked as
   * is; a name is resolved and refused when any of its addresses is. A name that does not resolve
   * now is accepted: delivery checks again after resolving, every time.
   */
  async refusal(url: string, resolve: (host: string) => Promise<string[]>): Promise<string | undefined> {
    let host: string;
    try {
      host = new URL(url).hostname;
    } catch {
      return 'must be an http or https URL';
    }
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    if (isIP(bare) !== 0) return this.allows(bare) ? undefined : `${bare} is a private, loopback or reserved address`;
    const name = bare.replace(/\.$/, '').toLowerCase();
    if (name === 'localhost' || name.endsWith('.localhost')) {
      if (['127.0.0.1', '::1'].every((a) => this.allows(a))) return undefined;
      return `${name} is this host`;
    }
    const addresses = await resolve(name).catch(() => []);
    const denied = addresses.find((a) => !this.allows(a));
    return denied === undefined ? undefined : `${name} resolves to ${denied}, a private, loopback or reserved address`;
  }

  /**
   * A `lookup` for net/tls connect: resolves as usual, then hands the socket only addresses this
   * policy allows, so what is checked is what is connected to (no DNS rebinding in between).
   */
  lookup(resolve: (hostname: string) => Promise<LookupAddress[]>): LookupFunction {
    return (hostname, options, callback) => {
      resolve(hostname).then(
        (addresses) => {
          const allowed = addresses.filter(
            (a) => (options.family === 4 || options.family === 6 ? a.family === options.family : true) && this.allows(a.address),
          );
          if (allowed.length === 0) return callback(new AddressNotAllowedError(`${hostname} has no address webhooks may reach`), '', 0);
          if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
          return callback(null, allowed[0]!.address, allowed[0]!.family);
        },
        (error: NodeJS.ErrnoException) => callback(error, '', 0),
      );
    };
  }
}

/** Parses `a.b.c.d/n,x::/m` (TALLY_WEBHOOK_ALLOW_CIDRS); throws naming the bad entry. */
export function parseCidrList(value: string): string[] {
  const cidrs = value
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  for (const cidr of cidrs) addCidr(new BlockList(), cidr);
  return cidrs;
}

function addCidr(list: BlockList, cidr: string): void {
  const [address = '', bits] = cidr.split('/');
  const family = isIP(address);
  const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
  if (family === 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) {
    throw new Error(`${cidr} is not a CIDR range (e.g. 10.0.0.0/8 or fd00::/8)`);
  }
  list.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address. */
function embeddedIpv4(ip: string): string | undefined {
  const words = ipv6Words(ip);
  if (!words) return undefined;
  const v4 = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return v4(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!);
  return undefined;
}

function ipv6Words(ip: string): number[] | undefined {
  let text = ip.toLowerCase().split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (dotted) {
    const b = dotted.split('.').map(Number);
    text = text.slice(0, -dotted.length) + `${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((w) => parseInt(w, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const words = tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : undefined;
}

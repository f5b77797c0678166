import { isIP } from 'node:net';

/**
 * The unit failed authentications are counted per: an IPv4 address, or an IPv6 /64 (one host or
 * one customer network is given a whole /64, so counting single IPv6 addresses would give one
 * client 2^64 budgets). IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
export function clientGroup(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (mapped !== undefined) return mapped;
  if (isIP(ip) !== 6) return ip;
  const [head = '', tail] = ip.toLowerCase().split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const words = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${words
    .slice(0, 4)
    .map((w) => parseInt(w, 16).toString(16))
    .join(':')}::/64`;
}

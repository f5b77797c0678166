/**
 * The Sentinels a joining node is handed: the ones the origin is configured with first (the node's
 * processes ask them in order), then every other one the Sentinels know of, once each. A node
 * restarting while the origin's host is down then still knows the Sentinels that survive it.
 */
export function sentinelAddresses(configured: readonly string[], discovered: readonly string[]): string[] {
  return [...new Set([...configured, ...discovered])];
}

/** `host:port` of each entry of a `SENTINEL sentinels <name>` answer (flat field/value arrays); IPv6 hosts in brackets. */
export function sentinelsInAnswer(answer: unknown): string[] {
  if (!Array.isArray(answer)) return [];
  const addresses: string[] = [];
  for (const entry of answer) {
    if (!Array.isArray(entry)) continue;
    const fields = new Map<string, string>();
    for (let i = 0; i + 1 < entry.length; i += 2) fields.set(String(entry[i]), String(entry[i + 1]));
    const ip = fields.get('ip');
    const port = Number(fields.get('port'));
    if (ip === undefined || ip === '' || !Number.isInteger(port) || port < 1 || port > 65_535) continue;
    addresses.push(ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);
  }
  return addresses;
}

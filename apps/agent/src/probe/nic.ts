/**
 * /sys/class/net/<iface>/speed in Mb/s. Virtual NICs (virtio, some clouds) and links that are down
 * report -1, fail to read, or show the unsigned forms of -1.
 */
export function parseNicSpeed(text: string): number | undefined {
  const value = Number(text.trim());
  if (!Number.isInteger(value) || value <= 0 || value === 65_535 || value === 4_294_967_295) return undefined;
  return value;
}

/** `/sys/class/net/<iface>` links into /sys/devices/virtual for loopback, bridges, veths, tunnels, bonds. */
export function isVirtualInterface(linkTarget: string): boolean {
  return linkTarget.includes('/devices/virtual/');
}

/** Media leaves through one interface, so the fastest physical link is the budget, not the sum. */
export function fastestNic(speeds: readonly (number | undefined)[]): number | undefined {
  const known = speeds.filter((s): s is number => s !== undefined);
  return known.length === 0 ? undefined : Math.max(...known);
}

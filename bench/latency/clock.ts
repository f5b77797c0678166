/**
 * The clock burned into pixels: the low 32 bits of Date.now() and a 16-bit checksum, 48 bits drawn
 * as an 8 × 6 grid of black (0) / white (1) blocks. The same functions run in the publisher and
 * subscriber pages (serialised with toString), and in unit tests.
 */
export const GRID = { cols: 8, rows: 6, width: 640, height: 480 } as const;

export function checksum16(ts32: number): number {
  const lo = ts32 & 0xffff;
  const hi = (ts32 >>> 16) & 0xffff;
  return (lo ^ ((hi << 3) & 0xffff) ^ (hi >>> 13) ^ 0xa5a5) & 0xffff;
}

/** The 48 bits for a timestamp, most significant first. */
export function encodeClock(nowMs: number): number[] {
  const ts32 = (nowMs % 2 ** 32) >>> 0;
  const sum = checksum16(ts32);
  const bits: number[] = [];
  for (let i = 31; i >= 0; i--) bits.push((ts32 >>> i) & 1);
  for (let i = 15; i >= 0; i--) bits.push((sum >>> i) & 1);
  return bits;
}

/**
 * The timestamp back from 48 bits, or undefined when the checksum does not match (a frame caught
 * mid-update, or blocks smeared by the encoder). `nowMs` restores the high bits.
 */
export function decodeClock(bits: readonly number[], nowMs: number): number | undefined {
  if (bits.length !== 48) return undefined;
  let ts32 = 0;
  for (let i = 0; i < 32; i++) ts32 = ((ts32 << 1) | (bits[i] ?? 0)) >>> 0;
  let sum = 0;
  for (let i = 32; i < 48; i++) sum = (sum << 1) | (bits[i] ?? 0);
  if (checksum16(ts32) !== sum) return undefined;
  const ageMs = (nowMs - ts32) % 2 ** 32;
  return nowMs - (ageMs < 0 ? ageMs + 2 ** 32 : ageMs);
}

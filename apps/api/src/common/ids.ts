import { randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export type IdPrefix = 'app' | 'key' | 'str';

/** `prefix_` + 16 random lowercase alphanumerics (~82 bits). */
export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(16);
  let body = '';
  for (const byte of bytes) body += ALPHABET[byte % ALPHABET.length];
  return `${prefix}_${body}`;
}

import { hash } from 'node:crypto';

const BLOCK_BYTES = 64;
const DIGEST_BYTES = 32;

/**
 * HMAC-SHA256 (RFC 2104) with one key: SHA-256 over the key's inner pad and the message, then over
 * its outer pad and that digest. The pads are computed once and each message is hashed by
 * node:crypto's one-shot `hash()`, which keeps no native handle per call: `createHmac` builds an
 * `Hmac` stream object with its own OpenSSL context per signature, which costs the join token's
 * mint several times the hashing itself (docs/capacity.md). Synchronous and not reentrant by design:
 * the buffers are reused by every call.
 */
export class HmacSha256 {
  private inner: Buffer;
  private readonly outer = Buffer.allocUnsafe(BLOCK_BYTES + DIGEST_BYTES);

  constructor(key: Buffer, messageBytes = 1024) {
    const block = Buffer.alloc(BLOCK_BYTES);
    (key.length > BLOCK_BYTES ? hash('sha256', key, 'buffer') : key).copy(block);
    this.inner = Buffer.allocUnsafe(BLOCK_BYTES + messageBytes);
    for (let i = 0; i < BLOCK_BYTES; i += 1) {
      this.inner[i] = block[i]! ^ 0x36;
      this.outer[i] = block[i]! ^ 0x5c;
    }
  }

  /** The MAC of the message's UTF-8 bytes, base64url without padding (a JWS signature). */
  base64url(message: string): string {
    // A UTF-16 unit never takes more than 3 bytes in UTF-8.
    if (message.length * 3 > this.inner.length - BLOCK_BYTES) this.grow(message.length * 3);
    const written = this.inner.write(message, BLOCK_BYTES, 'utf8');
    hash('sha256', this.inner.subarray(0, BLOCK_BYTES + written), 'buffer').copy(this.outer, BLOCK_BYTES);
    return hash('sha256', this.outer, 'base64url');
  }

  private grow(messageBytes: number): void {
    const inner = Buffer.allocUnsafe(BLOCK_BYTES + messageBytes);
    this.inner.copy(inner, 0, 0, BLOCK_BYTES);
    this.inner = inner;
  }
}

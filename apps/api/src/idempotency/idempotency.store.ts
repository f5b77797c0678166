import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { openSecret, sealSecret } from '@tally/webhooks';
import { RedisConnection } from '@tally/runtime';

/** How long a key is remembered (Stripe's convention): a retry within a day replays the first response. */
export const IDEMPOTENCY_TTL_S = 24 * 3_600;
/**
 * How long a key stays "in progress" unless the request running it renews it: a request that died
 * with its process frees its key this soon, not after a day.
 */
export const IDEMPOTENCY_PENDING_TTL_S = 30;

// Renews only the running request's own pending record, never a kept response (whose TTL is a day).
const RENEW_PENDING = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('EXPIRE', KEYS[1], ARGV[2]) end return 0`;

export type IdempotencyRecord =
  Readonly<{ state: 'pending'; fingerprint: string }> | Readonly<{ state: 'done'; fingerprint: string; body: unknown }>;

/** As kept in Redis: the body is JSON, sealed when a secrets key is configured. */
type Stored = Readonly<{ state: 'pending'; fingerprint: string }> | Readonly<{ state: 'done'; fingerprint: string; body: string }>;

/**
 * The adapter in front of Redis for Idempotency-Key records, scoped per caller (the admin, or one
 * app). A kept response may carry a secret shown once (an API key, a stream key): it is sealed with
 * TALLY_SECRETS_KEY when one is set.
 */
@Injectable()
export class IdempotencyStore {
  constructor(
    private readonly redis: RedisConnection,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /** Takes the key for a first request; when it is already taken, returns what it holds. */
  async claim(scope: string, key: string, fingerprint: string): Promise<IdempotencyRecord | undefined> {
    const redisKey = this.keyOf(scope, key);
    const taken = await this.redis.set(redisKey, pendingJson(fingerprint), 'EX', IDEMPOTENCY_PENDING_TTL_S, 'NX');
    if (taken === 'OK') return undefined;
    const raw = await this.redis.get(redisKey);
    // Expired between the two calls: this request is the first again.
    if (raw === null) return this.claim(scope, key, fingerprint);
    const stored = JSON.parse(raw) as Stored;
    if (stored.state === 'pending') return stored;
    const body = this.config.secretsKey ? openSecret(this.config.secretsKey, stored.body, redisKey) : stored.body;
    return { state: 'done', fingerprint: stored.fingerprint, body: JSON.parse(body) as unknown };
  }

  /** Keeps a running request's claim alive for another pending TTL; false when it is no longer pending. */
  async renew(scope: string, key: string, fingerprint: string): Promise<boolean> {
    const renewed = await this.redis.eval(RENEW_PENDING, 1, this.keyOf(scope, key), pendingJson(fingerprint), IDEMPOTENCY_PENDING_TTL_S);
    return renewed === 1;
  }

  async complete(scope: string, key: string, fingerprint: string, body: unknown): Promise<void> {
    const redisKey = this.keyOf(scope, key);
    const json = JSON.stringify(body ?? null);
    const done: Stored = {
      state: 'done',
      fingerprint,
      body: this.config.secretsKey ? sealSecret(this.config.secretsKey, json, redisKey) : json,
    };
    await this.redis.set(redisKey, JSON.stringify(done), 'EX', IDEMPOTENCY_TTL_S);
  }

  /** A request that failed leaves nothing behind: retrying with the same key runs it again. */
  async forget(scope: string, key: string): Promise<void> {
    await this.redis.del(this.keyOf(scope, key));
  }

  private keyOf(scope: string, key: string): string {
    return `tally:idem:${scope}:${key}`;
  }
}

function pendingJson(fingerprint: string): string {
  const pending: Stored = { state: 'pending', fingerprint };
  return JSON.stringify(pending);
}

import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { openSecret, sealSecret } from '@tally/webhooks';
import { RedisConnection } from '../infra/infra.module.js';

/** How long a key is remembered (Stripe's convention): a retry within a day replays the first response. */
export const IDEMPOTENCY_TTL_S = 24 * 3_600;

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
    const pending: Stored = { state: 'pending', fingerprint };
    const taken = await this.redis.set(redisKey, JSON.stringify(pending), 'EX', IDEMPOTENCY_TTL_S, 'NX');
    if (taken === 'OK') return undefined;
    const raw = await this.redis.get(redisKey);
    // Expired between the two calls: this request is the first again.
    if (raw === null) return this.claim(scope, key, fingerprint);
    const stored = JSON.parse(raw) as Stored;
    if (stored.state === 'pending') return stored;
    const body = this.config.secretsKey ? openSecret(this.config.secretsKey, stored.body, redisKey) : stored.body;
    return { state: 'done', fingerprint: stored.fingerprint, body: JSON.parse(body) as unknown };
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

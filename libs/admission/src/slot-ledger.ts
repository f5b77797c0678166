import type { Redis } from 'ioredis';
import { CONFIRM_SCRIPT, RESERVE_SCRIPT, USAGE_SCRIPT } from './slot-ledger.lua.js';

export type SlotResource = 'streams';

export type Reservation = Readonly<{ granted: true; used: number }> | Readonly<{ granted: false; used: number; limit: number }>;

type LedgerCommands = {
  tallyReserve(key: string, member: string, limit: number, nowMs: number, lapseAtMs: number): Promise<[number, number]>;
  tallyConfirm(key: string, member: string): Promise<number>;
  tallyUsage(key: string, nowMs: number): Promise<number>;
};

/**
 * Atomic per-app slots in Redis: check-and-take happens in one Lua script, so
 * any number of API processes sharing the Redis can never exceed a limit.
 */
export class SlotLedger {
  private readonly redis: Redis & LedgerCommands;

  constructor(
    redis: Redis,
    private readonly now: () => number = Date.now,
  ) {
    redis.defineCommand('tallyReserve', { numberOfKeys: 1, lua: RESERVE_SCRIPT });
    redis.defineCommand('tallyConfirm', { numberOfKeys: 1, lua: CONFIRM_SCRIPT });
    redis.defineCommand('tallyUsage', { numberOfKeys: 1, lua: USAGE_SCRIPT });
    this.redis = redis as Redis & LedgerCommands;
  }

  /** Takes a slot that lapses after `lapseAfterMs` unless confirmed. Re-reserving a held slot is a no-op. */
  async reserve(appId: string, resource: SlotResource, member: string, limit: number, lapseAfterMs: number): Promise<Reservation> {
    const now = this.now();
    const [granted, used] = await this.redis.tallyReserve(key(appId, resource), member, limit, now, now + lapseAfterMs);
    return granted === 1 ? { granted: true, used } : { granted: false, used, limit };
  }

  /** Makes a held slot permanent until released; false when it had already lapsed or was released. */
  async confirm(appId: string, resource: SlotResource, member: string): Promise<boolean> {
    return (await this.redis.tallyConfirm(key(appId, resource), member)) === 1;
  }

  async release(appId: string, resource: SlotResource, member: string): Promise<void> {
    await this.redis.zrem(key(appId, resource), member);
  }

  async usage(appId: string, resource: SlotResource): Promise<number> {
    return this.redis.tallyUsage(key(appId, resource), this.now());
  }

  /** Confirmed slots only: an unconfirmed one may belong to a stream whose row is being written, and lapses by itself. */
  async confirmedMembers(appId: string, resource: SlotResource): Promise<string[]> {
    return this.redis.zrangebyscore(key(appId, resource), '+inf', '+inf');
  }

  async unconfirmedMembers(appId: string, resource: SlotResource): Promise<string[]> {
    return this.redis.zrangebyscore(key(appId, resource), `(${this.now()}`, '(+inf');
  }

  /** Takes back a slot for something known to be running (after Redis lost its data), whatever the limit. */
  async restore(appId: string, resource: SlotResource, member: string): Promise<void> {
    await this.redis.zadd(key(appId, resource), '+inf', member);
  }

  async forgetApp(appId: string): Promise<void> {
    await this.redis.del(key(appId, 'streams'));
  }
}

function key(appId: string, resource: SlotResource): string {
  return `tally:slots:{${appId}}:${resource}`;
}

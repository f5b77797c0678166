import type { RedisConnection } from '@tally/runtime';
import type { Grant, LeaseBackend } from './leased-counter.js';

/**
 * KEYS[1] the window's counter; ARGV want, max, window (ms). Adds up to `want` without passing
 * `max`, opening a window of `window` ms when none is open (or the key lost its expiry), and answers
 * {granted, the window's total, its remaining ms}.
 */
const LEASE = `
local want = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  local granted = math.min(want, max)
  redis.call('SET', KEYS[1], granted, 'PX', window)
  return {granted, granted, window}
end
local used = tonumber(redis.call('GET', KEYS[1])) or 0
local granted = math.max(0, math.min(want, max - used))
if granted > 0 then used = redis.call('INCRBY', KEYS[1], granted) end
return {granted, used, ttl}
`;

type LeaseCommand = { tallyRateLease(key: string, want: number, max: number, windowMs: number): Promise<[number, number, number]> };

/** The shared window counters in Redis, one key per app and budget under `tally:rl:`. */
export class RedisLeases implements LeaseBackend {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix = 'tally:rl:',
  ) {
    if (!('tallyRateLease' in redis)) redis.defineCommand('tallyRateLease', { numberOfKeys: 1, lua: LEASE });
  }

  async lease(key: string, want: number, max: number, windowMs: number): Promise<Grant> {
    // Queued commands would hold the request until Redis is back: fail at once (the limiter fails open).
    if (this.redis.status !== 'ready') throw new Error(`Redis connection is ${this.redis.status}`);
    const command = this.redis as unknown as LeaseCommand;
    const [granted, used, ttlMs] = await command.tallyRateLease(this.prefix + key, want, max, windowMs);
    return { granted, used, ttlMs };
  }
}

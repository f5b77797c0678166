/**
 * Slots are members of a sorted set per (app, resource); the score is when an
 * unconfirmed slot lapses (+inf once confirmed). Each script prunes lapsed
 * slots first, so a reservation nobody confirmed frees itself without a sweep.
 */

/** KEYS[1] set; ARGV: member, limit, now ms, lapse-at ms → {1, used} | {0, used} */
export const RESERVE_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return {1, redis.call('ZCARD', KEYS[1])}
end
local used = redis.call('ZCARD', KEYS[1])
if used + 1 > tonumber(ARGV[2]) then
  return {0, used}
end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
return {1, used + 1}
`;

/** KEYS[1] set; ARGV: member → 1 if the slot was held (and is now permanent), else 0 */
export const CONFIRM_SCRIPT = `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], '+inf', ARGV[1])
  return 1
end
return 0
`;

/** KEYS[1] set; ARGV: now ms → used */
export const USAGE_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
return redis.call('ZCARD', KEYS[1])
`;

/**
 * The atomic half of admission. TypeScript (libs/capacity) decides *where* a
 * workload goes from a snapshot of the counters; these scripts re-check that
 * decision against the live counters and apply it in one step, so concurrent
 * admissions on any number of API processes can never pass a limit.
 *
 * Keys: tally:cap:res:<id> (JSON record), tally:cap:pending (zset id → lapse ms),
 * tally:cap:all (set of ids), tally:cap:app:<appId> (hash class → units),
 * tally:cap:node:<nodeId> (hash ramMb / cpuMillicores / nicKbps / rt:<runtime> / gpu:<i>).
 */
const COMMON = `
local LOADS = {'ramMb', 'cpuMillicores', 'nicKbps'}

-- Integers only, formatted by hand: Lua would send -0 as "-0", which HINCRBY refuses.
local function incr(key, field, by)
  if by ~= 0 then return redis.call('HINCRBY', key, field, string.format('%d', by)) end
  return tonumber(redis.call('HGET', key, field) or '0')
end

local function release_record(id)
  local raw = redis.call('GET', 'tally:cap:res:' .. id)
  if not raw then return 0 end
  local r = cjson.decode(raw)
  local appKey = 'tally:cap:app:' .. r.appId
  for cls, n in pairs(r.classes) do incr(appKey, cls, -n) end
  local nodeKey = 'tally:cap:node:' .. r.nodeId
  for _, k in ipairs(LOADS) do incr(nodeKey, k, -r.load[k]) end
  if r.runtime then
    local left = incr(nodeKey, 'rt:' .. r.runtime.name, -r.count)
    if left <= 0 then
      for _, k in ipairs(LOADS) do incr(nodeKey, k, -r.runtime.idle[k]) end
      redis.call('HDEL', nodeKey, 'rt:' .. r.runtime.name)
    end
  end
  if r.gpu then incr(nodeKey, 'gpu:' .. r.gpu.index, -r.gpu.sessions) end
  redis.call('DEL', 'tally:cap:res:' .. id)
  redis.call('ZREM', 'tally:cap:pending', id)
  redis.call('SREM', 'tally:cap:all', id)
  return 1
end

local function expire(now)
  local ids = redis.call('ZRANGEBYSCORE', 'tally:cap:pending', '-inf', '(' .. now, 'LIMIT', 0, 200)
  for _, id in ipairs(ids) do release_record(id) end
  return #ids
end

local function hnum(key, field)
  return tonumber(redis.call('HGET', key, field) or '0')
end
`;

/**
 * ARGV: id, now ms, lapse-at ms, request JSON
 *   { appId, nodeId, kind, count, classes: [{cls, limit}], load: {ramMb,...}, allocatable: {...},
 *     runtime?: {name, idle: {...}}, gpu?: {index, sessions, limit} }
 * → {'ok'} | {'held'} (this id already holds a reservation) | {'quota', cls, limit, used, requested}
 *   | {'capacity', resource, limit, used, requested}
 */
export const RESERVE_SCRIPT = `${COMMON}
local id, now, lapseAt = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
expire(now)
if redis.call('EXISTS', 'tally:cap:res:' .. id) == 1 then return {'held'} end
local q = cjson.decode(ARGV[4])
local appKey = 'tally:cap:app:' .. q.appId
for _, c in ipairs(q.classes) do
  local used = hnum(appKey, c.cls)
  if used + q.count > c.limit then return {'quota', c.cls, tostring(c.limit), tostring(used), tostring(q.count)} end
end
local nodeKey = 'tally:cap:node:' .. q.nodeId
local add = {}
local startsRuntime = q.runtime and hnum(nodeKey, 'rt:' .. q.runtime.name) == 0
for _, k in ipairs(LOADS) do
  add[k] = q.load[k] + (startsRuntime and q.runtime.idle[k] or 0)
  local used = hnum(nodeKey, k)
  if used + add[k] > q.allocatable[k] then
    return {'capacity', k, tostring(q.allocatable[k]), tostring(used), tostring(add[k])}
  end
end
if q.gpu then
  local used = hnum(nodeKey, 'gpu:' .. q.gpu.index)
  if used + q.gpu.sessions > q.gpu.limit then
    return {'capacity', 'nvenc', tostring(q.gpu.limit), tostring(used), tostring(q.gpu.sessions)}
  end
end
for _, c in ipairs(q.classes) do incr(appKey, c.cls, q.count) end
for _, k in ipairs(LOADS) do incr(nodeKey, k, add[k]) end
if q.runtime then incr(nodeKey, 'rt:' .. q.runtime.name, q.count) end
if q.gpu then incr(nodeKey, 'gpu:' .. q.gpu.index, q.gpu.sessions) end
local classes = {}
for _, c in ipairs(q.classes) do classes[c.cls] = q.count end
local record = { appId = q.appId, nodeId = q.nodeId, kind = q.kind, count = q.count, classes = classes,
  load = q.load, runtime = q.runtime, gpu = q.gpu and { index = q.gpu.index, sessions = q.gpu.sessions } or nil,
  confirmed = false, createdAt = now }
redis.call('SET', 'tally:cap:res:' .. id, cjson.encode(record))
redis.call('ZADD', 'tally:cap:pending', lapseAt, id)
redis.call('SADD', 'tally:cap:all', id)
return {'ok'}
`;

/** ARGV: id, now ms → 1 when the reservation is held (and now permanent), 0 when it lapsed or was released. */
export const CONFIRM_SCRIPT = `${COMMON}
expire(tonumber(ARGV[2]))
local key = 'tally:cap:res:' .. ARGV[1]
local raw = redis.call('GET', key)
if not raw then return 0 end
local r = cjson.decode(raw)
if not r.confirmed then
  r.confirmed = true
  redis.call('SET', key, cjson.encode(r))
  redis.call('ZREM', 'tally:cap:pending', ARGV[1])
end
return 1
`;

/** ARGV: id → 1 when this call released it, 0 when nothing was held. */
export const RELEASE_SCRIPT = `${COMMON}
return release_record(ARGV[1])
`;

/**
 * ARGV: now ms, lapse-at ms, id… → the ids that are no longer held as a lease (lapsed, released,
 * never taken, or confirmed). Every other id now lapses at lapse-at instead (a lease renewed by the
 * process serving it); a lapse time is never moved earlier.
 */
export const RENEW_SCRIPT = `${COMMON}
local now, lapseAt = tonumber(ARGV[1]), tonumber(ARGV[2])
expire(now)
local lost = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  if redis.call('ZSCORE', 'tally:cap:pending', id) then
    redis.call('ZADD', 'tally:cap:pending', 'XX', 'GT', lapseAt, id)
  else
    table.insert(lost, id)
  end
end
return lost
`;

/** ARGV: now ms → how many lapsed reservations were released. */
export const EXPIRE_SCRIPT = `${COMMON}
return expire(tonumber(ARGV[1]))
`;

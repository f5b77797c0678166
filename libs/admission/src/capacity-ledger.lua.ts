/**
 * The atomic half of admission. TypeScript (libs/capacity) decides *where* a workload goes from a
 * snapshot of the counters; these scripts re-check that decision against the live counters, the
 * app's stored policy (caps, guarantees) and the pool's unused guarantees, and apply it in one
 * step, so concurrent admissions on any number of API processes can never pass a limit. Each
 * script reads only the keys it is given (capacity-ledger.keys.ts), so its cost does not depend
 * on how many apps or reservations exist.
 *
 * Reservation scripts take KEYS = reservationKeys(id, appId, nodeId):
 *   1 res:<id>, 2 pending, 3 all, 4 app:<appId>, 5 policy:<appId>, 6 node:<nodeId>, 7 pool
 */
const COMMON = `
local LOADS = {'ramMb', 'cpuMillicores', 'nicKbps'}

-- Integers only, formatted by hand: Lua would send -0 as "-0", which HINCRBY refuses.
local function incr(key, field, by)
  if by ~= 0 then return redis.call('HINCRBY', key, field, string.format('%d', by)) end
  return tonumber(redis.call('HGET', key, field) or '0')
end

local function hnum(key, field)
  return tonumber(redis.call('HGET', key, field) or '0')
end

local function policy_of(key)
  local raw = redis.call('GET', key)
  if raw then return cjson.decode(raw) end
  return nil
end

-- The app's unused guarantee at its classes' costs (libs/capacity unusedGuarantee).
local function unused(policy, appKey)
  local out = {ramMb = 0, cpuMillicores = 0, nicKbps = 0}
  if not policy then return out end
  for cls, g in pairs(policy.guarantees) do
    local free = g - hnum(appKey, cls)
    if free > 0 then
      local u = policy.units[cls]
      for _, k in ipairs(LOADS) do out[k] = out[k] + free * u[k] end
    end
  end
  return out
end

local function shift_held(poolKey, before, after)
  for _, k in ipairs(LOADS) do incr(poolKey, 'held:' .. k, after[k] - before[k]) end
end

-- Gives back everything the reservation took. appId / nodeId say which keys the caller passed.
local function release_record(keys, id, appId, nodeId)
  local raw = redis.call('GET', keys[1])
  if not raw then
    redis.call('ZREM', keys[2], id)
    redis.call('SREM', keys[3], id)
    return 0
  end
  local r = cjson.decode(raw)
  if r.appId ~= appId or r.nodeId ~= nodeId then return -1 end
  local policy = policy_of(keys[5])
  local before = unused(policy, keys[4])
  for cls, n in pairs(r.classes) do incr(keys[4], cls, -n) end
  shift_held(keys[7], before, unused(policy, keys[4]))
  local freed = {}
  for _, k in ipairs(LOADS) do freed[k] = r.load[k] end
  if r.runtime then
    local left = incr(keys[6], 'rt:' .. r.runtime.name, -r.count)
    if left <= 0 then
      for _, k in ipairs(LOADS) do freed[k] = freed[k] + r.runtime.idle[k] end
      redis.call('HDEL', keys[6], 'rt:' .. r.runtime.name)
    end
  end
  for _, k in ipairs(LOADS) do
    incr(keys[6], k, -freed[k])
    incr(keys[7], k, -freed[k])
  end
  if r.gpu then incr(keys[6], 'gpu:' .. r.gpu.index, -r.gpu.sessions) end
  if r.disk then incr(keys[7], 'disk:' .. r.disk.key, -r.disk.mb) end
  redis.call('DEL', keys[1])
  redis.call('ZREM', keys[2], id)
  redis.call('SREM', keys[3], id)
  return 1
end
`;

/**
 * KEYS: reservationKeys. ARGV: id, now ms, lapse-at ms, request JSON
 *   { appId, nodeId, kind, count, classes: [cls], defaults: {cls: cap}, enforce,
 *     load: {ramMb,...}, allocatable: {...}, runtime?: {name, idle}, gpu?: {index, sessions, limit},
 *     disk?: {key, mb, limit} (MB on the filesystem the workload writes to, counted in pool field disk:<key>),
 *     pool: { allocatable: {...}, runtimeHolds: [{name, classes: [cls], idle: {...}}] } }
 * → {'ok'} | {'held', nodeId} (this id already holds a reservation, there) | {'quota', cls, limit, used, requested}
 *   | {'capacity', resource, limit, used, requested} | {'guaranteed', resource, limit, used, requested}
 *
 * Caps: the policy's explicit cap, else the request's default, never below the guarantee. Work
 * inside the app's own guarantee is charged at least what the guarantee kept free for it; other
 * work must leave every other unused guarantee free, and the idle load of a runtime guaranteed work
 * will need while that runtime is down on the node (libs/capacity guardGuarantees). `enforce`
 * false (restoring running work) skips both rules but not the node's budget, and charges its disk
 * reservation even past the limit (refusing would not stop it writing). Disk counters live in
 * the pool hash, keyed by filesystem, so nodes that mount one shared filesystem share its counter.
 */
export const RESERVE_SCRIPT = `${COMMON}
local id, now, lapseAt = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local heldRaw = redis.call('GET', KEYS[1])
if heldRaw then return {'held', cjson.decode(heldRaw).nodeId} end
local q = cjson.decode(ARGV[4])
local policy = policy_of(KEYS[5])
local limits = policy and policy.limits or {}
local guarantees = policy and policy.guarantees or {}
local within = true
local taken = {ramMb = 0, cpuMillicores = 0, nicKbps = 0}
for _, cls in ipairs(q.classes) do
  local used = hnum(KEYS[4], cls)
  local g = guarantees[cls] or 0
  local limit = math.max(limits[cls] or q.defaults[cls], g)
  if q.enforce and used + q.count > limit then
    return {'quota', cls, tostring(limit), tostring(used), tostring(q.count)}
  end
  local free = math.max(0, g - used)
  if q.count > free then within = false end
  local n = math.min(q.count, free)
  if n > 0 then
    for _, k in ipairs(LOADS) do taken[k] = taken[k] + n * policy.units[cls][k] end
  end
end
local startsRuntime = q.runtime and hnum(KEYS[6], 'rt:' .. q.runtime.name) == 0
local charged, add, covered = {}, {}, true
for _, k in ipairs(LOADS) do
  charged[k] = math.max(q.load[k], taken[k])
  if q.load[k] > taken[k] then covered = false end
  add[k] = charged[k] + (startsRuntime and q.runtime.idle[k] or 0)
  local used = hnum(KEYS[6], k)
  if used + add[k] > q.allocatable[k] then
    return {'capacity', k, tostring(q.allocatable[k]), tostring(used), tostring(add[k])}
  end
end
if q.gpu then
  local used = hnum(KEYS[6], 'gpu:' .. q.gpu.index)
  if used + q.gpu.sessions > q.gpu.limit then
    return {'capacity', 'nvenc', tostring(q.gpu.limit), tostring(used), tostring(q.gpu.sessions)}
  end
end
if q.disk and q.enforce then
  local used = hnum(KEYS[7], 'disk:' .. q.disk.key)
  if used + q.disk.mb > q.disk.limit then
    return {'capacity', 'disk', tostring(q.disk.limit), tostring(used), tostring(q.disk.mb)}
  end
end
if q.enforce and not (within and covered) then
  local hold = {ramMb = 0, cpuMillicores = 0, nicKbps = 0}
  for _, rt in ipairs(q.pool.runtimeHolds) do
    local guaranteed = 0
    for _, cls in ipairs(rt.classes) do guaranteed = guaranteed + hnum(KEYS[7], 'g:' .. cls) end
    local needed = not (q.runtime and q.runtime.name == rt.name) and hnum(KEYS[6], 'rt:' .. rt.name) == 0
    if guaranteed > 0 and needed then
      for _, k in ipairs(LOADS) do hold[k] = hold[k] + rt.idle[k] end
    end
  end
  for _, k in ipairs(LOADS) do
    if add[k] > 0 then
      local keptFree = hnum(KEYS[7], 'held:' .. k) - taken[k] + hold[k]
      local used = hnum(KEYS[7], k)
      if used + add[k] + keptFree > q.pool.allocatable[k] then
        return {'guaranteed', k, tostring(math.max(0, q.pool.allocatable[k] - keptFree)), tostring(used), tostring(add[k])}
      end
    end
  end
end
for _, cls in ipairs(q.classes) do incr(KEYS[4], cls, q.count) end
for _, k in ipairs(LOADS) do
  incr(KEYS[6], k, add[k])
  incr(KEYS[7], k, add[k])
  incr(KEYS[7], 'held:' .. k, -taken[k])
end
if q.runtime then incr(KEYS[6], 'rt:' .. q.runtime.name, q.count) end
if q.gpu then incr(KEYS[6], 'gpu:' .. q.gpu.index, q.gpu.sessions) end
if q.disk then incr(KEYS[7], 'disk:' .. q.disk.key, q.disk.mb) end
local classes = {}
for _, cls in ipairs(q.classes) do classes[cls] = q.count end
local record = { appId = q.appId, nodeId = q.nodeId, kind = q.kind, count = q.count, classes = classes,
  load = charged, runtime = q.runtime, gpu = q.gpu and { index = q.gpu.index, sessions = q.gpu.sessions } or nil,
  disk = q.disk and { key = q.disk.key, mb = q.disk.mb } or nil, confirmed = false, createdAt = now }
redis.call('SET', KEYS[1], cjson.encode(record))
redis.call('ZADD', KEYS[2], lapseAt, id)
redis.call('SADD', KEYS[3], id)
return {'ok'}
`;

/**
 * KEYS: res:<id>, pending. ARGV: id, now ms → 1 when the reservation is held (and now permanent),
 * 0 when it lapsed or was released.
 */
export const CONFIRM_SCRIPT = `
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local lapseAt = redis.call('ZSCORE', KEYS[2], ARGV[1])
if lapseAt and tonumber(lapseAt) < tonumber(ARGV[2]) then return 0 end
local r = cjson.decode(raw)
if not r.confirmed then
  r.confirmed = true
  redis.call('SET', KEYS[1], cjson.encode(r))
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return 1
`;

/**
 * KEYS: reservationKeys. ARGV: id, appId, nodeId → 1 when this call released it, 0 when nothing
 * was held, -1 when the record names another app or node (the caller read a stale record).
 */
export const RELEASE_SCRIPT = `${COMMON}
return release_record(KEYS, ARGV[1], ARGV[2], ARGV[3])
`;

/**
 * KEYS: reservationKeys. ARGV: id, appId, nodeId, now ms → like RELEASE_SCRIPT, but only while the
 * reservation is still unconfirmed and its lapse time has passed (0 otherwise).
 */
export const LAPSE_SCRIPT = `${COMMON}
local lapseAt = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not lapseAt or tonumber(lapseAt) >= tonumber(ARGV[4]) then return 0 end
return release_record(KEYS, ARGV[1], ARGV[2], ARGV[3])
`;

/**
 * KEYS: pending. ARGV: now ms, lapse-at ms, id… → the ids that are no longer held as a lease (lapsed,
 * released, never taken, or confirmed). Every other id now lapses at lapse-at instead (a lease
 * renewed by the process serving it); a lapse time is never moved earlier, and a lapsed one is
 * never revived.
 */
export const RENEW_SCRIPT = `
local now, lapseAt = tonumber(ARGV[1]), tonumber(ARGV[2])
local lost = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local current = redis.call('ZSCORE', KEYS[1], id)
  if current and tonumber(current) >= now then
    redis.call('ZADD', KEYS[1], 'XX', 'GT', lapseAt, id)
  else
    table.insert(lost, id)
  end
end
return lost
`;

/**
 * KEYS: policy:<appId>, app:<appId>, pool. ARGV: the app's policy JSON (StoredPolicy), or '' to
 * drop it. Moves the pool's unused-guarantee and guarantee-total counters by the difference.
 */
export const SET_POLICY_SCRIPT = `${COMMON}
local old = policy_of(KEYS[1])
local new = nil
if ARGV[1] ~= '' then new = cjson.decode(ARGV[1]) end
shift_held(KEYS[3], unused(old, KEYS[2]), unused(new, KEYS[2]))
if old then for cls, g in pairs(old.guarantees) do incr(KEYS[3], 'g:' .. cls, -g) end end
if new then
  for cls, g in pairs(new.guarantees) do incr(KEYS[3], 'g:' .. cls, g) end
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('DEL', KEYS[1])
end
return 1
`;

-- Many keys' exchanges of one bucket at once. KEYS[1] the bucket's epoch, KEYS[2] the hash that
-- holds its keys' states, one field per key. ARGV: now (us, or empty), the epoch id the caller
-- knows, then 7 per key: field, kind ('w' sliding window, 'b' token bucket), two parameters
-- (window: W us, permits; bucket: interval us per permit, tolerance us = burst x interval),
-- charge, ask, give back. A key's exchange gives back unspent permits (buckets), charges what the
-- caller admitted ahead of an answer (even beyond the limit), then grants up to ask within it.
-- A key not written since Redis lost its state (no state, or one from before a failover that may
-- have lost its last writes) is taken as full in the window of the loss, a bucket as emptied at
-- the loss. Each value starts with the time its state is as good as new; past it, the field is
-- deleted by a sweep of a few fields per call (a cursor in field '#') and the hash expires with
-- its latest field (whose time field '!' keeps).
-- Returns {epoch id, its loss mark, then per key: granted, valid (us, -1: no end), retry (us
-- until one permit, when none granted)}.
local now = clock(ARGV[1])
local id, lost = epoch(ARGV[2], now)
local n = (#ARGV - 2) / 7
local fields = {'!', '#'}
for i = 1, n do fields[i + 2] = ARGV[2 + (i - 1) * 7 + 1] end
local old = redis.call('HMGET', KEYS[2], unpack(fields))
local latest = tonumber(old[1]) or 0

local function f0(x) return string.format('%.0f', x) end

local function window(state, W, permits, charge, ask)
  local w = math.floor(now / W)
  local sw, cur, prev, t = w, 0, 0, 0
  if state then
    local _, a, b, c, d = string.match(state, '^(%S+) (%S+) (%S+) (%S+) (%S+)$')
    sw, cur, prev, t = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
  end
  if sw < w then
    if w - sw == 1 then prev = cur else prev = 0 end
    cur = 0
    sw = w
  elseif sw > w then
    -- Written by a caller whose clock reads later: count in that window, from its start.
    w = sw
  end
  if lost > 0 and t < lost and math.floor(lost / W) == w then
    cur = math.max(cur, permits)
  end
  local start = w * W
  local elapsed = math.max(0, now - start)
  cur = cur + charge
  -- The previous window's weight, rounded up exactly (products stay below 2^53).
  local num = prev * (W - elapsed)
  local weight = math.ceil(num / W)
  if weight * W < num then weight = weight + 1 end
  local granted = math.min(ask, math.max(0, permits - cur - weight))
  cur = cur + granted
  local retry = 0
  if granted == 0 and ask > 0 then
    local room = permits - cur - 1
    local at
    if room >= 0 and prev > 0 then
      at = start + W - room * W / prev
    elseif room >= 0 then
      at = now
    else
      at = start + 2 * W - (permits - 1) * W / cur
    end
    retry = math.max(1, math.ceil(at - now))
  end
  -- Weighs nothing two windows after the start of this one.
  local ends = start + 2 * W
  local value = f0(ends) .. ' ' .. f0(sw) .. ' ' .. f0(cur) .. ' ' .. f0(prev) .. ' ' .. f0(now)
  -- TIME truncates to the microsecond: end the lease one microsecond early.
  return value, ends, granted, math.max(0, start + W - now - 1), retry
end

local function bucket(state, interval, tolerance, charge, ask, back)
  local tat, written
  if state then
    local _, a, b = string.match(state, '^(%S+) (%S+) (%S+)$')
    tat, written = tonumber(a), tonumber(b)
  end
  if lost > 0 and (written or 0) < lost and now < lost + tolerance then
    tat = math.max(tat or 0, lost + tolerance)
  end
  tat = tat or now
  if tat < now then tat = now end
  if back > 0 then tat = math.max(now, tat - back * interval) end
  tat = tat + charge * interval
  local room = now + tolerance - tat
  local granted = 0
  if room > 0 then
    granted = math.floor(room / interval)
    if granted * interval > room then granted = granted - 1 end
    granted = math.min(ask, granted)
  end
  tat = tat + granted * interval
  local retry = 0
  if granted == 0 and ask > 0 then
    retry = math.max(1, math.ceil(tat + interval - tolerance - now))
  end
  -- Full again at tat.
  local ends = math.ceil(tat)
  return f0(ends) .. ' ' .. string.format('%.3f', tat) .. ' ' .. f0(now), ends, granted, -1, retry
end

-- The sweep: fields past their end, a few more than this call writes, from where the last stopped.
local scan = redis.call('HSCAN', KEYS[2], old[2] or '0', 'COUNT', 2 * n + 8)
local stale = {}
for i = 1, #scan[2], 2 do
  local f = scan[2][i]
  if f ~= '!' and f ~= '#' and tonumber(string.match(scan[2][i + 1], '^(%S+)')) <= now then
    stale[#stale + 1] = f
  end
end
if #stale > 0 then redis.call('HDEL', KEYS[2], unpack(stale)) end

local out = {id, f0(lost)}
local writes = {}
local written = {}
for i = 1, n do
  local a = 2 + (i - 1) * 7
  local value, ends, granted, valid, retry
  -- A key twice in one call: the later exchange reads what the earlier wrote.
  local state = written[fields[i + 2]] or old[i + 2]
  if ARGV[a + 2] == 'w' then
    value, ends, granted, valid, retry = window(state, tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]),
      tonumber(ARGV[a + 5]), tonumber(ARGV[a + 6]))
  else
    value, ends, granted, valid, retry = bucket(state, tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]),
      tonumber(ARGV[a + 5]), tonumber(ARGV[a + 6]), tonumber(ARGV[a + 7]))
  end
  written[fields[i + 2]] = value
  writes[#writes + 1] = fields[i + 2]
  writes[#writes + 1] = value
  if ends > latest then latest = ends end
  out[#out + 1] = granted
  out[#out + 1] = valid
  out[#out + 1] = retry
end
writes[#writes + 1] = '#'
writes[#writes + 1] = scan[1]
writes[#writes + 1] = '!'
writes[#writes + 1] = f0(latest)
redis.call('HSET', KEYS[2], unpack(writes))
-- Set at every call, as the clock it counts from may not be the server's. A given clock (virtual
-- time) may stand still while the server's runs: the hash then outlives its end by ten minutes of
-- the server's, or a count could expire within its window on the given clock.
local ttl = math.floor((latest - now) / 1000) + 1
if ARGV[1] ~= '' then ttl = ttl + 600000 end
redis.call('PEXPIRE', KEYS[2], ttl)
return out

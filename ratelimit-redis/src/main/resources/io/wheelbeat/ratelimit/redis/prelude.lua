-- Prepended to each script: what every script does first.

-- The script's clock in microseconds: the caller's shared clock when it gives one (given, a
-- number as a string), else the Redis server's TIME.
local function clock(given)
  local now = tonumber(given)
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return now
end

-- The store's epoch lives in KEYS[2] as '<id> <lost at>': a new id means Redis lost its state
-- (FLUSHALL, a restart without persistence, the epoch evicted). The caller names the id it knows;
-- the first caller that knows an older one marks the loss at its now (microseconds on the
-- script's clock; 0: no loss seen). Returns the id and the loss time.
local function epoch(known, now)
  local e = redis.call('GET', KEYS[2])
  if not e then
    local t = redis.call('TIME')
    e = t[1] .. '.' .. t[2] .. ' 0'
    redis.call('SET', KEYS[2], e)
  end
  local id, lost = string.match(e, '^(%S+) (%S+)$')
  lost = tonumber(lost)
  if lost == 0 and known ~= '' and known ~= id then
    lost = now
    redis.call('SET', KEYS[2], id .. ' ' .. string.format('%.0f', now))
  end
  return id, lost
end

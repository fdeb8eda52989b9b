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

-- The store's epoch lives in KEYS[1] as '<id> <lost at> <replication id>': a new id means Redis
-- lost its state (FLUSHALL, a restart without persistence, the epoch evicted). A missing epoch is
-- created marked as lost at now: Redis is new or lost its state, and which one cannot be told, so
-- what it held before now is unknown. An epoch written under the serving node's previous
-- replication id means a replica was promoted: writes it had not received are lost, so the loss is
-- marked at now. Written under another node's id (a slot migrated, a restart from disk), it is
-- only stamped with this node's. Otherwise the first caller that knows an older id marks the loss
-- at its now (microseconds on the script's clock; 0: no loss seen). Returns the id and the loss
-- time.
local function epoch(known, now)
  local info = redis.call('INFO', 'replication')
  local replid = string.match(info, 'master_replid:(%w+)') or '-'
  local previous = string.match(info, 'master_replid2:(%w+)') or '-'
  local e = redis.call('GET', KEYS[1])
  local mark = string.format('%.0f', math.max(now, 1))
  if not e then
    local t = redis.call('TIME')
    e = t[1] .. '.' .. t[2] .. ' ' .. mark .. ' ' .. replid
    redis.call('SET', KEYS[1], e)
  end
  local id, lost, writer = string.match(e, '^(%S+) (%S+) ?(%S*)$')
  lost = tonumber(lost)
  if writer ~= replid then
    if writer == previous then lost = tonumber(mark) end
    redis.call('SET', KEYS[1], id .. ' ' .. string.format('%.0f', lost) .. ' ' .. replid)
  elseif lost == 0 and known ~= '' and known ~= id then
    lost = tonumber(mark)
    redis.call('SET', KEYS[1], id .. ' ' .. mark .. ' ' .. replid)
  end
  return id, lost
end

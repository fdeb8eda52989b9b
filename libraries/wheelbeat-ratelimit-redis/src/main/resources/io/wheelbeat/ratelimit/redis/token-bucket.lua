-- A token-bucket (GCRA) lease: give back unspent permits, charge what the caller admitted ahead
-- of an answer, then grant up to ask permits while the theoretical arrival time stays within
-- the tolerance (burst x interval) of now, on one clock (the server's TIME unless the caller
-- gives a shared one). KEYS[1] the key, KEYS[2] the epoch; ARGV: now (us, or empty), interval
-- (us per permit), tolerance (us), charge, ask, give back, the epoch id the caller knows. A key
-- not written since Redis lost its state (no state, or one from before a failover that may have
-- lost its last writes) is taken as emptied at the moment of the loss. The key holds
-- '<arrival time> <written at>'.
-- Returns {granted, -1 (no end in the store), retry (us until one permit, when none granted),
-- epoch id, its loss mark}.
local now = clock(ARGV[1])
local interval = tonumber(ARGV[2])
local tolerance = tonumber(ARGV[3])
local charge = tonumber(ARGV[4])
local ask = tonumber(ARGV[5])
local back = tonumber(ARGV[6])
local id, lost = epoch(ARGV[7], now)
local state = redis.call('GET', KEYS[1])
local tat, written
if state then
  local a, b = string.match(state, '^(%S+) ?(%S*)$')
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
-- Forgotten once full again.
redis.call('SET', KEYS[1], string.format('%.3f %.0f', tat, now), 'PX', math.floor((tat - now) / 1000) + 1)
local retry = 0
if granted == 0 and ask > 0 then
  retry = math.max(1, math.ceil(tat + interval - tolerance - now))
end
return {granted, -1, retry, id, string.format('%.0f', lost)}

-- A sliding-window lease: charge what the caller admitted ahead of an answer, then grant up to
-- ask permits while previous x (unexpired fraction) + current <= permits, over fixed windows of
-- W microseconds on one clock (the server's TIME unless the caller gives a shared one).
-- KEYS[1] the key, KEYS[2] the epoch; ARGV: now (us, or empty), W (us), permits, charge, ask,
-- the epoch id the caller knows. A key not written since Redis lost its state (no count, or one
-- from before a failover that may have lost its last writes) is taken as full in the window of the
-- loss: its count is unknown.
-- Returns {granted, valid (us until the window ends), retry (us until one permit, when none
-- granted), epoch id, its loss mark}.
local now = clock(ARGV[1])
local W = tonumber(ARGV[2])
local permits = tonumber(ARGV[3])
local charge = tonumber(ARGV[4])
local ask = tonumber(ARGV[5])
local w = math.floor(now / W)
local id, lost = epoch(ARGV[6], now)
local s = redis.call('HMGET', KEYS[1], 'w', 'c', 'p', 't')
local sw = tonumber(s[1]) or w
local cur = tonumber(s[2]) or 0
local prev = tonumber(s[3]) or 0
if sw < w then
  if w - sw == 1 then prev = cur else prev = 0 end
  cur = 0
  sw = w
elseif sw > w then
  -- Written by a caller whose clock reads later: count in that window, from its start.
  w = sw
end
if lost > 0 and (tonumber(s[4]) or 0) < lost and math.floor(lost / W) == w then
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
redis.call('HSET', KEYS[1], 'w', sw, 'c', cur, 'p', prev, 't', string.format('%.0f', now))
-- Forgotten once it weighs nothing: two windows after the start of this one.
redis.call('PEXPIRE', KEYS[1], math.floor((start + 2 * W - now) / 1000) + 1)
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
-- TIME truncates to the microsecond: end the lease one microsecond early.
return {granted, math.max(0, start + W - now - 1), retry, id, string.format('%.0f', lost)}

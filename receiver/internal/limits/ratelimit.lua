-- One check of one sliding window, atomically (receiver/ratelimit_store.go).
-- KEYS[1]: the window, a sorted set of the allowed calls' times (µs).
-- KEYS[2]: set while the window refuses, since it last allowed a call.
-- ARGV: now (µs), the window (µs), the limit, a member unique to this call.
-- Answers {allowed, first refusal since the last allowed call, µs until a call would be allowed}.
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local ttl = math.ceil(window / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
if n < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('DEL', KEYS[2])
  return {1, 0, 0}
end
-- The call that must leave the window before another fits (the oldest,
-- unless the limit was lowered while the window held more).
local at = n - limit
local oldest = tonumber(redis.call('ZRANGE', KEYS[1], at, at, 'WITHSCORES')[2])
local first = 0
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ttl) then
  first = 1
end
return {0, first, oldest + window - now}

-- The compare-and-set of one reward unlock, as a Redis developer would write it.
-- KEYS: 1 idempotency hash, 2 balance, 3 unlocked rewards hash, 4 timeline stream, 5 version counter
-- ARGV: 1 idempotency key, 2 reward id, 3 cost, 4 channel, 5 payload to publish (the sender's clock)
local previous = redis.call('HGET', KEYS[1], ARGV[1])
if previous then return tonumber(previous) end
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 then
  return redis.error_reply('already_unlocked')
end
local cost = tonumber(ARGV[3])
local balance = tonumber(redis.call('GET', KEYS[2]) or '0')
if balance < cost then
  return redis.error_reply('insufficient_points')
end
redis.call('DECRBY', KEYS[2], cost)
redis.call('HSET', KEYS[3], ARGV[2], '1')
local version = redis.call('INCR', KEYS[5])
redis.call('XADD', KEYS[4], '*', 'type', 'reward_unlocked', 'reward', ARGV[2], 'version', version)
redis.call('HSET', KEYS[1], ARGV[1], version)
redis.call('PUBLISH', ARGV[4], ARGV[5] .. ' ' .. version)
return version

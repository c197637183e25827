-- apply.lua: store one batch of a projection with its checkpoint, all or nothing
-- (docs/workers.md). Every key shares the partition's hash tag: one cluster slot.
--
-- KEYS[1] checkpoint  mighty:{pNN}:ckpt:<kind>   hash: id = last applied feed id, n = count
-- KEYS[2] lease       mighty:{pNN}:lease:<kind>  the owning worker's token
-- KEYS[3] feed        mighty:{pNN}:feed          (read: the entry after the checkpoint)
-- KEYS[4] dead letters  mighty:{pNN}:dead:<kind>        stream
-- KEYS[5] quarantine    mighty:{pNN}:dead:<kind>:tables hash: table -> first dead feed id
-- KEYS[6 ..]          the documents the ops write
-- ARGV[1] lease token, ARGV[2] expected checkpoint (what the batch was folded on),
-- ARGV[3] new checkpoint (the batch's last feed id), ARGV[4] entries applied (dead
-- letters included: they are passed over for good), ARGV[5] the batch's first feed id
-- past the expected checkpoint,
-- ARGV[6] kept: '1' = the documents and the checkpoint go to the AOF and the replicas,
-- '0' = to the replicas only (a cache of the streams: docs/workers.md, "Kept off the AOF"),
-- ARGV[7] d = dead letters, then d groups of 5: feed id, table, version, kind, reason,
-- then ops of 4 arguments: code, key index, field, value. Codes: s = SET, d = DEL,
-- h = HSET, x = HDEL; S and H also publish the value (sharded Pub/Sub) on a channel
-- named after the key (and ':' .. field for a hash field); T = HSET that publishes the
-- value on the channel of the key itself (one channel for every field: the turns);
-- P = a last word: DEL the key and publish the value on its channel (a closed table's
-- seat views: the followers learn it, nothing is kept).
--
-- Replies: {'ok', seconds, microseconds}   written; the server's clock after the write
--          {'done', stored}                 the checkpoint is already at or past this
--                                           batch (a redelivery): nothing written
--          {'stale', stored}                the checkpoint moved since the batch was
--                                           folded: nothing written, reload
--          {'lease', holder}                this worker no longer owns the partition
--          {'gap', stored}                  the batch does not start at the entry right
--                                           after the checkpoint (the group was moved
--                                           past it): nothing written, set the group
--                                           back to the checkpoint and read again
--
-- Every check precedes the first write, so a refusal writes nothing.

local function parse_id(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end

local function compare(a, b)
  local am, as = parse_id(a)
  local bm, bs = parse_id(b)
  if am ~= bm then return am < bm and -1 or 1 end
  if as ~= bs then return as < bs and -1 or 1 end
  return 0
end

local holder = redis.call('GET', KEYS[2])
if holder ~= ARGV[1] then return {'lease', holder or ''} end

local checkpoint = redis.call('HMGET', KEYS[1], 'id', 'n')
local stored, count = checkpoint[1] or '0-0', tonumber(checkpoint[2] or '0')
local expected, new, first = ARGV[2], ARGV[3], ARGV[5]
local deads = tonumber(ARGV[7])
local first_op = 8 + 5 * deads

if compare(stored, new) >= 0 then return {'done', stored} end
if stored ~= expected then return {'stale', stored} end

-- Moving the checkpoint from expected to new passes over every entry between them, so
-- the batch must hold them all: it must start at the entry right after the checkpoint.
-- The group is read with NOACK, and a worker that lost its lease and read once more
-- after this one took the partition moved the group past entries no one applied.
local after = redis.call('XRANGE', KEYS[3], '(' .. stored, '+', 'COUNT', 1)
if #after == 0 or after[1][1] ~= first then return {'gap', stored} end

-- Dead letters first: the first write of the script (an OOM refuses it whole).
for i = 8, first_op - 1, 5 do
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', 10000, '*',
    'id', ARGV[i], 't', ARGV[i + 1], 'v', ARGV[i + 2], 'kind', ARGV[i + 3], 'reason', ARGV[i + 4])
  if ARGV[i + 1] ~= '' then redis.call('HSETNX', KEYS[5], ARGV[i + 1], ARGV[i]) end
end
-- A cache of the streams (the views) is written to the replicas but not to the AOF: a
-- Redis restarted from its AOF has them as of its last rewrite, or not at all, with the
-- checkpoint they were folded to, and the workers fold on from there or rebuild from the
-- table streams (the feed past that checkpoint was trimmed). Dead letters stay on disk.
-- (fakeredis, the embedded default, keeps nothing on disk and has no set_repl.)
if ARGV[6] == '0' and redis.set_repl then redis.set_repl(redis.REPL_REPLICA) end
for i = first_op, #ARGV, 4 do
  local code, key, field, value = ARGV[i], KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], ARGV[i + 3]
  if code == 's' or code == 'S' then
    redis.call('SET', key, value)
    if code == 'S' then redis.call('SPUBLISH', key, value) end
  elseif code == 'h' or code == 'H' then
    redis.call('HSET', key, field, value)
    if code == 'H' then redis.call('SPUBLISH', key .. ':' .. field, value) end
  elseif code == 'T' then
    redis.call('HSET', key, field, value)
    redis.call('SPUBLISH', key, value)
  elseif code == 'P' then
    redis.call('DEL', key)
    redis.call('SPUBLISH', key, value)
  elseif code == 'd' then
    redis.call('DEL', key)
  elseif code == 'x' then
    redis.call('HDEL', key, field)
  end
end
-- one write for both fields: the AOF holds one line a batch, not two
redis.call('HSET', KEYS[1], 'id', new, 'n', count + tonumber(ARGV[4]))
local now = redis.call('TIME')
return {'ok', now[1], now[2]}

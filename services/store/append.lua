-- append.lua: append one command's events to a table, all or nothing (docs/store.md).
--
-- KEYS[1] table stream    mighty:{pNN}:t:<table>:events  entry id 0-<version>
-- KEYS[2] table meta      mighty:{pNN}:t:<table>:meta    hash: v = version, h = head hash,
--   a = the server time (ms) of the last append (what a delta head's time is added to;
--   a meta without it, written by a release before 2026-12-06, gets a whole time)
-- KEYS[3] command ids     mighty:{pNN}:t:<table>:cmds    hash: command id -> outcome
-- KEYS[4] partition feed  mighty:{pNN}:feed
-- KEYS[5] (optional) previous command ids  mighty:{pNN}:t:<table>:cmdp  hash, as KEYS[3]: the
--   generation before (KEYS[3] holds the current one; see ARGV[7 + 2n])
-- KEYS[6] (optional) table index     mighty:{pNN}:tables  set of the partition's table ids:
--   a table's first append adds its id (services/store/table_index.py), so operator tools
--   list tables without SCANning the keyspace. Same hash tag: same slot, same script.
-- ARGV[1] table id, ARGV[2] expected version, ARGV[3] command id, ARGV[4] outcome,
-- ARGV[5] prev hash (the head hash the caller built on), ARGV[6] event count n,
-- ARGV[7 ..] n pairs: event bytes, event hash (hash version 2, from the caller:
--   sha256(prev hash hex .. command id .. '\n' .. event)), the hash as its 32 bytes (what
--   every append of this release sends, and what the feed then stores) or as 64 hex digits
--   (the feed stores it as sent; a record stores its 32 bytes either way); the meta and the
--   replies hold it as hex either way. Every event's hash is sent: the script keeps the
--   anchors' in the stream, every one in the feed, and the last in the meta.
--
-- Each event is one stream entry of one field, r, a record (docs/store.md, "The stored
-- entry"; services/store/record.py reads it); the entry id 0-<version> is the version.
-- The record's bytes: a flags byte (0x01: the hash follows, its 32 bytes; 0x02, a *head*:
-- the append's time, 6 bytes big-endian ms of the server's clock, then the command id, a
-- length byte and its bytes, follow; 0x04, with 0x02 only: the time is an unsigned LEB128
-- varint of the ms since the last append's time, meta's a, instead of the 6 bytes), then
-- the packed event, the rest. The hash is stored when the version is a multiple of
-- HASH_EVERY (an anchor): readers derive the others' from the entry before. The head is
-- stored on the first event of the append, on every anchor and on version 1: the other
-- events of an append have the command id and time of the entry before, which readers
-- carry (a read from the middle starts at an anchor, a head). An anchor and version 1
-- store the time whole (6 bytes), so every read has a time to add a delta to; the first
-- event of an append that is neither stores it as a delta, but when the meta holds no a
-- (a table written by an earlier release) or the clock went back (now < a): then whole.
-- The record's hash version is 2 (the time is not hashed). The feed's entries carry t v e h a, every hash.
-- The time is data the projections read (a turn's deadline starts then), so a rebuild
-- from the stream gives the same views as the live feed did. Releases before this one
-- wrote six fields hv v e h c a (and, before those, every hash, and the previous hash as
-- 'p'): readers still read them, and a stream may hold them, then records.
-- ARGV[7 + 2n] (optional, with KEYS[5]) the idempotency window in ms: command ids are kept
--   at least this long, then forgotten, in two generations. KEYS[3] holds the current one
--   and, in its field '' (no command id is empty), the server time it began; an append
--   made a window or more after that renames KEYS[3] to KEYS[5] (the generation before,
--   every id in it older than the window, goes) and begins a new one. An id is looked up
--   in both. Both keys are kept at least a window after this append (a key with less left
--   is set to expire 9/8 of a window from now), so a table nobody writes to drops them all.
--   A KEYS[3] without '' (written by a release before 2026-12-06, which kept a time-ordered
--   list '...:cmdx' instead) begins its generation at this append: its ids are kept longer.
--   Without KEYS[5] (the 4-key call of earlier releases) ids are kept for ever, as before.
--
-- Replies (RESP2 arrays):
--   {'ok', version, head hash}                        the events were written
--   {'dup', outcome, version, head hash}              command id seen before: nothing written
--   {'conflict', actual version}                      expected version is stale: nothing written
--   {'chain', head hash}                              prev hash is not the head: nothing written
--   {'bad', reason} / {'corrupt', reason}             refused: nothing written
--
-- Redis does not roll back a script that fails halfway: writes made before the error stay.
-- So every check comes before the first write, and the writes are ordered so that the
-- only one that can still fail is the very first (XADD 0-<v+1>, refused as a whole if the
-- stream was written behind our back; or OOM, which Redis checks at a script's first write
-- only). Everything after it writes keys whose type and ids were checked above.

local MAX_EVENT_BYTES = 65536
local MAX_APPEND_BYTES = 262144
local MAX_EVENTS = 64
local MAX_OUTCOME_BYTES = 4096
local HASH_EVERY = 16  -- HASH_EVERY in services/store/base.py (a contract test pins the two)
local GENESIS = string.rep('0', 64)

local function bad(reason) return {'bad', reason} end

local function count(text)
  -- a plain decimal count: tonumber alone would take ' 7', '1e3' and '0x10'
  if type(text) ~= 'string' or #text < 1 or #text > 12 or not string.match(text, '^%d+$') then
    return nil
  end
  return tonumber(text)
end

local function is_hash(text)
  return type(text) == 'string' and #text == 64 and string.match(text, '^[0-9a-f]+$') ~= nil
end

local function is_event_hash(text)
  return type(text) == 'string' and (#text == 32 or is_hash(text))
end

-- the head hash as the meta and the replies hold it: 64 lowercase hex digits
local function as_hex(hash)
  if #hash == 64 then return hash end
  return string.format(string.rep('%02x', 32), string.byte(hash, 1, 32))
end

local function key_type(key)
  local reply = redis.call('TYPE', key)
  if type(reply) == 'table' then return reply['ok'] end
  return reply
end

if #KEYS < 4 or #KEYS > 6 then return bad('expected 4 to 6 keys') end
local n = count(ARGV[6])
if n == nil or n < 1 or n > MAX_EVENTS then return bad('event count') end
local window = nil
if #KEYS >= 5 and #ARGV == 7 + 2 * n then
  window = count(ARGV[7 + 2 * n])
  if window == nil or window < 1 then return bad('idempotency window') end
elseif #ARGV ~= 6 + 2 * n then return bad('argument count') end
local table_id, command_id, outcome, prev = ARGV[1], ARGV[3], ARGV[4], ARGV[5]
if #table_id < 1 or #table_id > 64 or not string.match(table_id, '^[%w_%-]+$') then
  return bad('table id')
end
if #command_id < 1 or #command_id > 128 or not string.match(command_id, '^[%w_.:%-]+$') then
  return bad('command id')
end
if #outcome > MAX_OUTCOME_BYTES then return bad('outcome too large') end
local expected = count(ARGV[2])
if expected == nil then return bad('expected version') end
if not is_hash(prev) then return bad('prev hash') end
local total = 0
for i = 1, n do
  local data, hash = ARGV[5 + 2 * i], ARGV[6 + 2 * i]
  if #data > MAX_EVENT_BYTES then return bad('event too large') end
  total = total + #data
  if not is_event_hash(hash) then return bad('event hash') end
end
if total > MAX_APPEND_BYTES then return bad('append too large') end

local kinds = {{KEYS[1], 'stream'}, {KEYS[4], 'stream'}}
for _, pair in ipairs(kinds) do
  local found = key_type(pair[1])
  if found ~= 'none' and found ~= pair[2] then
    return {'corrupt', pair[1] .. ' is a ' .. found .. ', not a ' .. pair[2]}
  end
end

-- The two hashes are read before any write, so they need no TYPE call of their own (a
-- call costs ~1 us of server time): a read of a key of another type fails, told apart
-- by pcall, and answers as the TYPE check did.
local function read_hash(key, ...)
  local reply = redis.pcall(...)
  if type(reply) == 'table' and reply.err then
    local found = key_type(key)
    if found ~= 'hash' then return nil, {'corrupt', key .. ' is a ' .. found .. ', not a hash'} end
    return nil, reply
  end
  return reply, nil
end

local meta, refused = read_hash(KEYS[2], 'HMGET', KEYS[2], 'v', 'h', 'a')
if refused then return refused end
local version = tonumber(meta[1] or '0')
local head = meta[2] or GENESIS
local last_at = nil  -- nil: no a (an earlier release's table), or not a time
if meta[3] and #meta[3] <= 15 and string.match(meta[3], '^%d+$') then last_at = tonumber(meta[3]) end
if version == nil then return {'corrupt', 'stored version is not a number'} end

local seen
seen, refused = read_hash(KEYS[3], 'HGET', KEYS[3], command_id)
if refused then return refused end
if not seen and window then
  seen, refused = read_hash(KEYS[5], 'HGET', KEYS[5], command_id)
  if refused then return refused end
end
if seen then return {'dup', seen, version, head} end
if expected ~= version then return {'conflict', version} end
if prev ~= head then return {'chain', head} end
local index = nil
if #KEYS == 6 and version == 0 then  -- the table's first append: into the index
  index = KEYS[6]
  local found = key_type(index)
  if found ~= 'none' and found ~= 'set' then return {'corrupt', index .. ' is a ' .. found .. ', not a set'} end
end

-- CHECKS DONE: nothing below may fail except the first XADD, which fails whole.

local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
-- the head's time and command id, once an append: 6 bytes of now (ms < 2^53: exact in a double)
local stamp = {}
local rest = now
for j = 6, 1, -1 do
  stamp[j] = rest % 256
  rest = math.floor(rest / 256)
end
local named = string.char(#command_id) .. command_id
local head_bytes = string.char(stamp[1], stamp[2], stamp[3], stamp[4], stamp[5], stamp[6]) .. named
-- the first event's head when it is not an anchor nor version 1: ms since the last append,
-- an unsigned LEB128 varint (7 bits a byte, low first, the high bit on all but the last)
local delta_bytes = nil
if last_at and now >= last_at then
  local varint, d = '', now - last_at
  repeat
    local low = d % 128
    d = math.floor(d / 128)
    if d > 0 then low = low + 128 end
    varint = varint .. string.char(low)
  until d == 0
  delta_bytes = varint .. named
end
local v = version
for i = 1, n do
  v = v + 1
  local hash = ARGV[6 + 2 * i]
  local flags, kept, stamped = 0, '', ''
  if v % HASH_EVERY == 0 then
    flags = 1
    kept = hash
    if #kept == 64 then  -- sent as hex (an older caller): the record holds its 32 bytes
      kept = (string.gsub(kept, '%x%x', function(pair) return string.char(tonumber(pair, 16)) end))
    end
  end
  if v == 1 or v % HASH_EVERY == 0 or (i == 1 and not delta_bytes) then
    flags = flags + 2
    stamped = head_bytes
  elseif i == 1 then
    flags = flags + 6
    stamped = delta_bytes
  end
  redis.call('XADD', KEYS[1], '0-' .. v, 'r', string.char(flags) .. kept .. stamped .. ARGV[5 + 2 * i])
  prev = hash
end
v = version
for i = 1, n do
  v = v + 1
  redis.call('XADD', KEYS[4], '*', 't', table_id, 'v', v, 'e', ARGV[5 + 2 * i], 'h', ARGV[6 + 2 * i], 'a', now)
end
prev = as_hex(prev)
redis.call('HSET', KEYS[2], 'v', v, 'h', prev, 'a', now)
if window then
  -- the generation's start; a window or more ago, every id in the generation before is
  -- older than the window: it goes, and the current one becomes the generation before
  local since = tonumber(redis.call('HGET', KEYS[3], '') or '')
  if since and now - since >= window then
    redis.call('RENAME', KEYS[3], KEYS[5])
    since = nil
  end
  if not since then redis.call('HSET', KEYS[3], '', now) end
end
redis.call('HSET', KEYS[3], command_id, outcome)
if index then redis.call('SADD', index, table_id) end
if window then
  -- both keys outlive this append by at least the window: when one has less left, it is
  -- set to 9/8 of it, so its expiry is written (and goes to the AOF) about once every
  -- eighth of a window, not with every append (RENAME carries a key's expiry over)
  local keep = window + math.floor(window / 8)
  for _, key in ipairs({KEYS[3], KEYS[5]}) do
    local left = redis.call('PTTL', key)
    if left ~= -2 and left < window then redis.call('PEXPIRE', key, keep) end
  end
end
return {'ok', v, prev}

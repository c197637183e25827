"""Accounts in Redis, beside the player records (docs/accounts.md, "Keys").

- ``<ns>:player:<id>`` (the player's record, services/gateway/backend.py): an account adds
  ``account`` (its name as written) and ``password`` (the argon2id hash), and has no TTL;
  a deleted account keeps ``name`` = the anonymous label and ``deleted``, nothing else.
- ``<ns>:accounts:names``: one hash, the case-folded name -> the player id; a name is
  taken by ``HSETNX``, so two sign-ups of one name cannot both win.
- ``<ns>:player:<id>:sessions``: the account's sessions, session id ->
  ``<sha256 of its refresh secret>:<expiry>``; logging out deletes the field, deleting
  the account the key.

Every script names one key, so a Redis Cluster runs them all as they are.
``alive`` answers whether a token's session (or a guest token's player) may still act,
remembering a yes for ``cache_s`` in this process only: a session ended on another
gateway is refused here at most ``cache_s`` later, and at once on the gateway that ended it.
"""

from __future__ import annotations

import time
from typing import Any, Final

import msgspec

from services.gateway.tokens import Bearer

REMEMBERED: Final = 4096  # sessions a gateway remembers as alive (then forgotten at once)

# KEYS[1] the player's record; ARGV name, password hash, now.
# 1: the record is an account now; 0: it was one already; -1: a bot's or a deleted account's.
MAKE_ACCOUNT: Final = """
if redis.call('HEXISTS', KEYS[1], 'account') == 1 then return 0 end
if redis.call('HEXISTS', KEYS[1], 'bot') == 1 or redis.call('HEXISTS', KEYS[1], 'deleted') == 1 then
  return -1
end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'account', ARGV[1], 'password', ARGV[2])
redis.call('HSETNX', KEYS[1], 'created', ARGV[3])
redis.call('PERSIST', KEYS[1])
return 1
"""
# KEYS[1] the player's record; ARGV the anonymous label, now. The account's name, or false.
DELETE_ACCOUNT: Final = """
local name = redis.call('HGET', KEYS[1], 'account')
if not name then return false end
redis.call('HDEL', KEYS[1], 'account', 'password')
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'deleted', ARGV[2])
return name
"""
# KEYS[1] the name index; ARGV folded name, player: unset only if it still names the player.
RELEASE_NAME: Final = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0
"""
# KEYS[1] the account's sessions; ARGV session, digest, expiry, key ttl, most sessions, now.
# Opens the session after dropping the ended ones, and the oldest past the most.
OPEN_SESSION: Final = """
local all = redis.call('HGETALL', KEYS[1])
local live = {}
for i = 1, #all, 2 do
  local expiry = tonumber(string.match(all[i + 1], ':(%d+)$') or '0')
  if expiry <= tonumber(ARGV[6]) then redis.call('HDEL', KEYS[1], all[i])
  else table.insert(live, {all[i], expiry}) end
end
table.sort(live, function(a, b) return a[2] < b[2] end)
for i = 1, #live - tonumber(ARGV[5]) + 1 do redis.call('HDEL', KEYS[1], live[i][1]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':' .. ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""
# KEYS[1] the account's sessions; ARGV session, digest, new expiry, key ttl, now.
# 1: extended; 0: no such session (ended, expired) or another digest.
EXTEND_SESSION: Final = """
local held = redis.call('HGET', KEYS[1], ARGV[1])
if not held then return 0 end
local digest, expiry = string.match(held, '^(%x+):(%d+)$')
if digest ~= ARGV[2] or tonumber(expiry) <= tonumber(ARGV[5]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':' .. ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""


class Credentials(msgspec.Struct, frozen=True):
    """What a login needs of an account: its player, name as written and password hash."""

    player: str
    name: str
    password: str


class AccountStore:
    """The accounts' keys, on the gateway's asyncio client (``client``: redis-py's)."""

    def __init__(self, client: Any, namespace: str, cache_s: float = 1.0) -> None:
        self._client = client
        self._ns = namespace
        self._cache_s = cache_s
        self._alive: dict[Bearer, float] = {}  # bearer -> when found alive (monotonic)

    def _record(self, player: str) -> str:
        return f"{self._ns}:player:{player}"

    def _sessions(self, player: str) -> str:
        return f"{self._ns}:player:{player}:sessions"

    @property
    def _names(self) -> str:
        return f"{self._ns}:accounts:names"

    # ---------------------------------------------------------------- names

    async def claim_name(self, folded: str, player: str) -> bool:
        """Take ``folded`` for ``player``; False when another holds it."""
        return bool(await self._client.hsetnx(self._names, folded, player))

    async def release_name(self, folded: str, player: str) -> None:
        await self._client.eval(RELEASE_NAME, 1, self._names, folded, player)

    async def holder(self, folded: str) -> str | None:
        held = await self._client.hget(self._names, folded)
        return None if held is None else bytes(held).decode()

    # ---------------------------------------------------------------- records

    async def make_account(self, player: str, name: str, password_hash: str) -> int:
        """Make the player's record an account (``MAKE_ACCOUNT``'s answer)."""
        return int(await self._client.eval(MAKE_ACCOUNT, 1, self._record(player), name, password_hash,
                                           repr(time.time())))

    async def credentials(self, player: str) -> Credentials | None:
        name, password = await self._client.hmget(self._record(player), ["account", "password"])
        if name is None or password is None:
            return None
        return Credentials(player, bytes(name).decode(), bytes(password).decode())

    async def set_password(self, player: str, password_hash: str) -> None:
        """A rehash with today's parameters (the record must be an account still)."""
        await self._client.eval("if redis.call('HEXISTS', KEYS[1], 'account') == 1 then "
                                "return redis.call('HSET', KEYS[1], 'password', ARGV[1]) end return 0",
                                1, self._record(player), password_hash)

    async def delete_account(self, player: str, label: str) -> str | None:
        """Turn the account into its anonymous label; its name as written, None if it was
        not an account. Its sessions end and its name is freed (``end_all``, ``release_name``)."""
        name = await self._client.eval(DELETE_ACCOUNT, 1, self._record(player), label, repr(time.time()))
        return None if name is None else bytes(name).decode()

    # ---------------------------------------------------------------- sessions

    async def open_session(self, player: str, session: str, digest: str, ttl_s: int, most: int) -> None:
        now = int(time.time())
        await self._client.eval(OPEN_SESSION, 1, self._sessions(player), session, digest, now + ttl_s,
                                ttl_s + 60, most, now)

    async def extend_session(self, player: str, session: str, digest: str, ttl_s: int) -> bool:
        now = int(time.time())
        extended = await self._client.eval(EXTEND_SESSION, 1, self._sessions(player), session, digest,
                                           now + ttl_s, ttl_s + 60, now)
        return bool(int(extended))

    async def end_session(self, player: str, session: str) -> None:
        await self._client.hdel(self._sessions(player), session)
        self._alive.pop(Bearer(player, session), None)

    async def end_all(self, player: str) -> None:
        await self._client.delete(self._sessions(player))
        self.forget(player)

    def forget(self, player: str) -> None:
        """Ask Redis again about the player's tokens (its sessions ended, it became an account)."""
        for bearer in [b for b in self._alive if b.player == player]:
            del self._alive[bearer]

    async def alive(self, bearer: Bearer) -> bool:
        """Whether a signed, unexpired token may still act: its session exists and has
        not expired (an account's); its player is no account and no deleted one (a guest's)."""
        now = time.monotonic()
        seen = self._alive.get(bearer)
        if seen is not None and now - seen < self._cache_s:
            return True
        if bearer.session is None:
            account, deleted = await self._client.hmget(self._record(bearer.player), ["account", "deleted"])
            found = account is None and deleted is None
        else:
            held = await self._client.hget(self._sessions(bearer.player), bearer.session)
            expiry = bytes(held).rpartition(b":")[2] if held is not None else b""
            found = expiry.isdigit() and int(expiry) > time.time()
        if found and self._cache_s > 0:
            if len(self._alive) >= REMEMBERED:
                self._alive.clear()
            self._alive[bearer] = now
        return found

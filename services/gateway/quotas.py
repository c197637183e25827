"""Quotas and admission (docs/gateway.md, Quotas): what one client address or one player
may create or hold, counted in Redis so that every gateway counts against the same limits.

- **Counted quotas**: players created per client address, tables created per address and
  per player, quickplays per address and per player, each in a fixed window of
  ``quota_window_s`` (one ``EVAL`` a count: the count and its expiry in one round trip).
  An attempt over a quota is not counted, and is answered 429 with the limit's code
  (``too_many_players``, ``too_many_tables``, ``too_many_quickplays``) and ``Retry-After``:
  the seconds until the window turns.
- **Seats held at once** (``seats_per_player``): the tables where a player holds a seat,
  open or playing, kept per player as a sorted set of table ids (score: when the seat was
  taken). Taking one more is one script that adds the table only while there is room; a
  full set is pruned of the tables the player no longer holds a live seat at (finished,
  left) before the player is refused 429 ``too_many_seats`` (no ``Retry-After``: waiting
  does not free a seat, finishing or leaving does).
- **Commands** (``rate_commands`` per ``rate_window_s``): counted once per command id by
  each gateway, without a Redis call, and shared with the others a moment later
  (``command_rate.py``). A retry (the same player, table, id and body) is not counted
  again; the same id with another body is refused ``command_id_reused`` at once, whoever
  sent first, so that twenty bodies under one id sent together get one answer each way,
  not a race's.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import msgspec
import structlog

from services.gateway.errors import ApiError

if TYPE_CHECKING:
    from services.gateway.backend import Backend
    from services.settings import Settings

log = structlog.get_logger("mighty.gateway")

# A seat taken this recently counts without a look at its table (the directory may not
# show it yet); a seat being sought (a quickplay, a rematch) counts this long at most.
SEAT_GRACE_S: Final = 30.0
PENDING_S: Final = 300.0
PENDING: Final = "pending-"  # a seat being sought, not yet at a table

# KEYS[1] the window's counter; ARGV limit, ttl. 1: counted; 0: over the limit, not counted.
COUNT_SCRIPT: Final = """
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""
# KEYS[1] the player's seats; ARGV table, limit, now, ttl. 2: taken now; 1: held already; 0: full.
SEAT_SCRIPT: Final = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 2
"""
# KEYS[1] the open sockets of an address or a player, every gateway's (a sorted set: socket
# id -> until when it is held, epoch s); ARGV socket id, limit, now, ttl. 1: held; 0: full.
# A gateway renews what it holds (``SOCKET_RENEW_SCRIPT``): a dead gateway's run out.
SOCKET_SCRIPT: Final = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[3]) + tonumber(ARGV[4]), ARGV[1])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[4])) + 1)
return 1
"""
# KEYS[1] as above; ARGV until (epoch s), ttl, then the socket ids this gateway still holds there.
SOCKET_RENEW_SCRIPT: Final = """
for i = 3, #ARGV do redis.call('ZADD', KEYS[1], 'XX', ARGV[1], ARGV[i]) end
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 1)
return 1
"""


class Admission(msgspec.Struct, frozen=True):
    """What the admission of a command says: wait (over the rate limit: the seconds to
    wait), reused (the id was used for another command), retry (not counted again)."""

    wait: float | None = None
    reused: bool = False
    retry: bool = False


def client_address(connection: Any) -> str:
    """The client's address as the ASGI scope gives it ("unknown" when absent). Behind a
    reverse proxy it is the proxy's unless uvicorn is told to trust its forwarded headers
    (docs/operations.md)."""
    client = connection.scope.get("client") if hasattr(connection, "scope") else None
    if not client:
        return "unknown"
    host = client[0] if isinstance(client, list | tuple) and client else None
    return str(host)[:64] if host else "unknown"


def fingerprint(command: dict[str, Any]) -> str:
    """The same command body gives the same mark, whatever the order of its fields."""
    return hashlib.sha256(msgspec.json.encode(command, order="sorted")).hexdigest()[:32]


def window_wait(window_s: int, now: float | None = None) -> float:
    """Seconds until the fixed window of ``now`` turns."""
    now = time.time() if now is None else now
    return max((int(now // window_s) + 1) * window_s - now, 0.001)


def retry_after(wait: float) -> dict[str, str]:
    return {"Retry-After": str(max(1, round(wait + 0.5)))}


# ---------------------------------------------------------------- counted quotas


async def _admit(backend: Backend, counts: list[tuple[str, int, str]], window_s: int) -> None:
    """Count one against each (key, limit, refusal) in turn; the first over refuses, and
    the ones after it are not counted."""
    for key, limit, message in counts:
        wait = await backend.count_quota(key, limit, window_s)
        if wait is not None:
            raise ApiError(message.split(":", 1)[0], message.split(":", 1)[1] + f" Retry in {wait:.0f} s.",
                           status=429, headers=retry_after(wait))


def _per(settings: Settings) -> str:
    return f"{settings.quota_window_s} s"


async def admit_player(backend: Backend, settings: Settings, address: str) -> None:
    await _admit(backend, [(f"players:addr:{address}", settings.players_per_address,
                            f"too_many_players:More than {settings.players_per_address} players were "
                            f"created from your address in {_per(settings)}.")], settings.quota_window_s)


async def admit_table(backend: Backend, settings: Settings, address: str, player: str) -> None:
    await _admit(backend, [
        (f"tables:player:{player}", settings.tables_per_player,
         f"too_many_tables:You created more than {settings.tables_per_player} tables in {_per(settings)}."),
        (f"tables:addr:{address}", settings.tables_per_address,
         f"too_many_tables:More than {settings.tables_per_address} tables were created from your "
         f"address in {_per(settings)}."),
    ], settings.quota_window_s)


async def admit_quickplay(backend: Backend, settings: Settings, address: str, player: str) -> None:
    await _admit(backend, [
        (f"quickplays:player:{player}", settings.quickplays_per_player,
         f"too_many_quickplays:You asked for more than {settings.quickplays_per_player} quickplays "
         f"in {_per(settings)}."),
        (f"quickplays:addr:{address}", settings.quickplays_per_address,
         f"too_many_quickplays:More than {settings.quickplays_per_address} quickplays were asked for "
         f"from your address in {_per(settings)}."),
    ], settings.quota_window_s)


async def admit_login(backend: Backend, settings: Settings, address: str, folded_name: str) -> None:
    """A login or a sign-up costs a password hash: counted per account name (folded,
    whoever asks) and per address, in ``login_window_s`` (docs/accounts.md)."""
    name_key = hashlib.sha256(folded_name.encode()).hexdigest()[:32]  # any text, as a short key
    per = f"{settings.login_window_s} s"
    await _admit(backend, [
        (f"logins:name:{name_key}", settings.logins_per_name,
         f"too_many_logins:More than {settings.logins_per_name} logins to this name in {per}."),
        (f"logins:addr:{address}", settings.logins_per_address,
         f"too_many_logins:More than {settings.logins_per_address} logins from your address in {per}."),
    ], settings.login_window_s)


async def admit_command(backend: Backend, settings: Settings, player: str, table_id: str, client_id: str,
                        command: dict[str, Any]) -> None:
    """The rate limit, counted once per command id; a reused id refused before any work
    (both kept by the gateway: ``command_rate.py``)."""
    admission = await backend.admit_command(player, f"{table_id}:{client_id}", fingerprint(command),
                                            settings.rate_commands, settings.rate_window_s)
    if admission.reused:
        raise ApiError("command_id_reused", f"Command id {client_id} was used for another command; "
                       "send this one with a new id.")
    if admission.wait is not None:
        raise ApiError("rate_limited", f"More than {settings.rate_commands} commands in "
                       f"{settings.rate_window_s} s; retry in {admission.wait:.1f} s.",
                       headers=retry_after(admission.wait))


# ---------------------------------------------------------------- seats held at once


class SeatHold:
    """A seat counted against the player's limit while the caller seeks it: ``at(table)``
    names where it was taken (else it is given back when the hold ends)."""

    def __init__(self, member: str, new: bool) -> None:
        self.member = member
        self.new = new
        self.table: str | None = None

    def at(self, table_id: str | None) -> None:
        self.table = table_id


def _seats_full(settings: Settings) -> ApiError:
    return ApiError("too_many_seats", f"You hold seats at {settings.seats_per_player} open or playing tables, "
                    "the most at once; finish or leave one first.", status=429)


async def _live_seat(backend: Backend, player: str, table_id: str) -> bool:
    entry = await backend.entry(table_id)
    return entry is not None and entry.status != "closed" and player in entry.seats


async def _prune(backend: Backend, player: str) -> None:
    """Forget the seats the player no longer holds: a table finished or left, a seek
    given up long ago."""
    now = time.time()
    held = await backend.held_seats(player)
    checked = [t for t, at in held.items() if not t.startswith(PENDING) and now - at > SEAT_GRACE_S]
    lives = await asyncio.gather(*(_live_seat(backend, player, t) for t in checked))
    gone = [t for t, live in zip(checked, lives, strict=True) if not live]
    gone += [t for t, at in held.items() if t.startswith(PENDING) and now - at > PENDING_S]
    if gone:
        await backend.drop_seats(player, gone)


async def take_seat(backend: Backend, settings: Settings, player: str, member: str) -> bool:
    """Count ``member`` (a table, or a pending seek) among the player's seats; False: it
    was counted already. 429 ``too_many_seats`` when full once pruned."""
    for attempt in range(2):
        taken = await backend.take_seat(player, member, settings.seats_per_player, settings.player_ttl_s)
        if taken:
            return taken == 2
        if attempt == 0:
            await _prune(backend, player)
    raise _seats_full(settings)


@asynccontextmanager
async def seat_for(backend: Backend, settings: Settings, player: str,
                   table_id: str | None = None) -> AsyncIterator[SeatHold]:
    """Hold a seat for the block: at ``table_id`` when known (a join, a table created
    with a seat), else a pending one the block names with ``hold.at(table)``."""
    member = table_id or PENDING + secrets.token_hex(6)
    hold = SeatHold(member, await take_seat(backend, settings, player, member))
    if table_id is not None:
        hold.at(table_id)
    ok = False
    try:
        yield hold
        ok = True
    finally:
        drop = [member] if (not ok and hold.new) or member.startswith(PENDING) else []
        with contextlib.suppress(Exception):  # the bookkeeping never hides the block's outcome
            if ok and hold.table is not None and member.startswith(PENDING):
                await backend.take_seat(player, hold.table, settings.seats_per_player + 1, settings.player_ttl_s)
            if drop:
                await backend.drop_seats(player, drop)



# ---------------------------------------------------------------- player records


async def keep_seated_players(backend: Backend, settings: Settings) -> None:
    """For ever: renew the records of every player seated at a live table (the directory's
    open and playing tables), every tenth of ``player_ttl_s`` (at most hourly), so that a
    player never expires mid-match however long they sit without acting. A guest unused
    (no seat at a live table, no token use, no command at their tables) for
    ``player_ttl_s`` goes away with its record's Redis TTL."""
    every = min(settings.player_ttl_s / 10, 3600.0)
    while True:
        await asyncio.sleep(every)
        try:
            ids = await backend.directory_ids(finished=False)
            for at in range(0, len(ids), 100):
                entries = await backend.entries_of(ids[at:at + 100])
                await backend.touch_players([p for e in entries if e.status != "closed" for p in e.seats if p])
        except Exception as error:  # the store is down: the next round renews them
            log.warning("players_not_renewed", error=str(error)[:200])

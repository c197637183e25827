"""The gateway's one adapter to the command path and the stores (docs/gateway.md).

Every route reaches Redis through the ``Backend`` protocol and nothing else.
``RedisBackend`` is built on the async path (``services.bootstrap.wire_async``): the
``AsyncCommandHandler`` over the ``AsyncRedisEventStore`` for commands (no thread pool:
the appends of many tables in flight share pipelines), the ``AsyncReader`` for views,
ledgers and ``follow`` (``follow_async``), and the same asyncio client for the players,
the lobby, the rate limit and the operations' reads. It keeps nothing a second gateway
would need: the handler's cache is a cache (a stale one is caught up from the store on a
version conflict), everything else lives in Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import re
import secrets
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

import structlog
from redis.exceptions import NoScriptError

from domain.codec import decode_event
from domain.table import Submission, TableState
from projections import KINDS
from projections.directory import CLOSED_DOC, DIRECTORY_DOC, DirectoryEntry, decode_entry
from projections.directory import fold as fold_directory
from projections.ledger import (
    PLAYERS_DOC,
    AnyTableLedger,
    PlayerLedger,
    combine,
    decode_player,
    table_ledger_of,
)
from projections.ratings import PlayerRating, Reputation, decode_rating, decode_reputation
from services.app.lifecycle import Lifecycle
from services.app.ports import PlayerRecord, Submitted, Tables
from services.archive.reads import AsyncArchivedEventStore
from services.gateway import command_rate, quotas, sockets
from services.gateway.account_store import AccountStore
from services.gateway.chat import ChatLimits, ChatStore
from services.gateway.presence import Presence
from services.gateway.quotas import Admission
from services.projection.keys import ProjectionKeys
from services.projection.rater import RatingsKeys
from services.projection.store import START, id_ms, last_given
from services.store.base import Head, StoredEvent

if TYPE_CHECKING:
    from services.bootstrap import AsyncWiring

log = structlog.get_logger("mighty.gateway")

# players whose record's TTL a gateway remembers renewing (then forgotten at once: the
# next read of each renews it again)
PLAYERS_TOUCHED: Final = 4096

# how long a gateway trusts the player's ``lang`` it last read (a change made through
# another gateway shows within this; through this one at once)
PLAYER_LANG_TTL_S: Final = 30.0

SHARE_AT_STOP_S: Final = 1.0  # how long a stopping gateway waits to share its last command counts


class Backend(Tables, Protocol):
    """What the routes need of the command path and the stores, besides what the use
    cases need (``Tables``, services/app/ports.py)."""

    accounts: AccountStore  # accounts, names and sessions (services/gateway/account_store.py)
    chat: ChatStore  # table chat and mutes (services/gateway/chat.py)

    async def ping(self) -> None:
        """Return once the store answers; raise ``StoreUnavailable``/a Redis error if not."""
        ...

    # players
    async def set_player_lang(self, player: str, lang: str) -> None:
        """Keep ``lang`` as the player's language setting (a language of ``LANGS``)."""
        ...

    async def player_lang(self, player: str) -> str | None:
        """The player's language setting, if any (read at most every
        ``PLAYER_LANG_TTL_S`` per process and player)."""
        ...

    async def player_ledger(self, player: str) -> PlayerLedger | None: ...

    async def leaderboard(self, rules: str, limit: int, *, min_hands: int, since_ms: int) -> list[PlayerRating]:
        """The rule set's best ``limit`` ratings by ordinal of the players with at least
        ``min_hands`` rated hands, one of them at or after ``since_ms``."""
        ...

    async def server_ms(self) -> int:
        """The store's clock (the time the hands' ends are stamped with), ms."""
        ...

    # the command path
    async def events(self, table_id: str, after: int = 0, to: int | None = None) -> list[StoredEvent]:
        """The table's events with ``after < version <= to`` (all of them by default)."""
        ...

    async def head(self, table_id: str) -> Head:
        """The table's head as its meta holds it (an archived table's: its index entry)."""
        ...

    async def audit_checkpoint(self, table_id: str) -> bytes | None:
        """The table's stored audit checkpoint (services/audit/checkpoint.py), if any."""
        ...

    async def save_audit_checkpoint(self, table_id: str, data: bytes) -> None: ...

    # projections
    async def entries(self) -> list[DirectoryEntry]:
        """Every table of the directory, the finished ones too."""
        ...

    async def directory_ids(self, finished: bool | None = None) -> list[str]:
        """The ids of the directory's tables, sorted: the live ones (False), the finished
        ones (True) or both (None); no entry is read (lobby pages, services/gateway/pages.py)."""
        ...

    async def entries_of(self, ids: Sequence[str]) -> list[DirectoryEntry]:
        """The directory's entries of ``ids``, in that order (an id it has not: left out)."""
        ...

    async def view(self, table_id: str, reader: str) -> bytes | None: ...

    def follow(self, table_id: str, reader: str, after: int,
               take: Callable[[bytes], bool] | None = None) -> AsyncIterator[bytes]:
        """``reader``'s view each time it changes, from the first newer than ``after``;
        ``take``: a way to be given one at once, as it is published (False: it comes
        through the iterator as any other)."""
        ...

    async def ledger(self, table_id: str) -> AnyTableLedger | None: ...

    async def deadline(self, table_id: str) -> bytes | None:
        """The timer worker's deadline document of the table's turn (services/bots/timers.py)."""
        ...

    # operations
    async def lag_seconds(self) -> dict[str, float]:
        """How far each kind of projection is behind its feeds, at worst, in seconds."""
        ...

    async def dead_letters(self) -> dict[str, int]:
        """Per kind, the feed entries it could not decode or fold (its dead-letter
        streams, every partition's)."""
        ...

    # quotas and admission (services/gateway/quotas.py)
    async def count_quota(self, key: str, limit: int, window_s: int) -> float | None:
        """Count one against ``key``'s limit in a fixed window; the seconds to wait when
        over (then nothing is counted)."""
        ...

    async def admit_command(self, player: str, command_key: str, mark: str, limit: int,
                            window_s: int) -> Admission:
        """Count a command against the player's rate once per ``command_key``; ``mark``
        tells a retry (the same body) from a reused id (``command_rate.py``)."""
        ...

    async def take_seat(self, player: str, table: str, limit: int, ttl_s: int) -> int:
        """Count a seat at ``table``: 2 taken now, 1 held already, 0 the player holds ``limit``."""
        ...

    async def held_seats(self, player: str) -> dict[str, float]:
        """The tables (or pending seeks) counted as the player's seats, with when taken."""
        ...

    async def drop_seats(self, player: str, tables: Sequence[str]) -> None: ...

    async def hold_socket(self, owner: str, socket_id: str, limit: int, ttl_s: float) -> bool:
        """Count an open socket of ``owner`` (an address or a player), every gateway's
        together, for ``ttl_s`` unless renewed; False (nothing counted) when it holds ``limit``."""
        ...

    async def renew_sockets(self, held: Mapping[str, Sequence[str]], ttl_s: float) -> None:
        """The sockets still open, by owner: held ``ttl_s`` more."""
        ...

    async def release_socket(self, owner: str, socket_id: str) -> None: ...

    async def touch_players(self, ids: Sequence[str]) -> None:
        """The players' records were used: they live ``player_ttl_s`` more (at most once
        in a while per process and player)."""
        ...

    async def close(self) -> None: ...


ARCHIVED_LEDGERS: Final = 256  # archived tables' ledgers kept folded (each read from PostgreSQL)


def bot_player_id(level: str, name: str) -> str:
    """The player id of the bot of ``level`` named ``name`` (``domain.bots.bot_name``): the
    same at every table, and not a guest's nor an account's (those begin ``p``)."""
    return "b" + hashlib.sha256(f"{level}\n{name}".encode()).hexdigest()[:16]


_BOT_PLAYER: Final = re.compile(r"b[0-9a-f]{16}")


def is_bot_player(player: str) -> bool:
    """A bot the service seated (``bot_player_id``): rated under its own id (a quick play's
    bot: docs/ratings.md), but on no leaderboard (the boards' ``bot:<level>`` rows count
    the seats tables were created with)."""
    return _BOT_PLAYER.fullmatch(player) is not None


class RedisBackend:
    """The backend over Redis, on one asyncio client: the async command path and readers
    of ``wiring``, and the gateway's own keys (players, rate limit, claims)."""

    def __init__(self, wiring: AsyncWiring) -> None:
        self.wiring = wiring
        self.space = wiring.space
        self.aio: Any = wiring.client
        self.store = wiring.store
        self._archived_ledgers: dict[str, AnyTableLedger] = {}  # folded from PostgreSQL (``ledger``)
        self.handler = wiring.handler
        self.readers = wiring.readers
        secret = wiring.settings.secret
        self._secret = secret.encode() if secret else None
        self._ns = self.space.namespace
        self._coalesced = Coalesced(self.aio)
        self._rate = command_rate.CommandRate()  # the command rate limit, counted here and shared
        self._sharer: asyncio.Task[None] | None = None  # shares while there are counts to share
        self._window_s: int | None = None  # the rate window the counts are in
        self._share_failing = False
        self._closing = False  # stopping: no sharing started any more
        self._gateway_id = secrets.token_hex(6)  # this gateway's field in the shared counts
        self._player_ttl_s = wiring.settings.player_ttl_s
        self._touched: dict[str, float] = {}  # player -> when its record's TTL was last renewed here
        self._langs: dict[str, tuple[str | None, float]] = {}  # player -> (lang setting, when read)
        self.lifecycle = Lifecycle.of(wiring.settings)
        self._presence = Presence(self._coalesced, self.space, self.lifecycle)
        self.accounts = AccountStore(self.aio, self._ns, wiring.settings.session_cache_s)
        # table chat and mutes (chat.py); an archived table's chat is read from the archive
        self.chat = ChatStore(self.aio, self.space, self.readers, limits=ChatLimits.of(wiring.settings),
                              archived=self.store if isinstance(self.store, AsyncArchivedEventStore) else None)

    async def touch(self, table_id: str, status: str) -> None:
        await self._presence.touch(table_id, status)

    async def here(self, table_id: str, player: str, *, known_only: bool = False, leaving: bool = False) -> None:
        await self._presence.here(table_id, player, known_only=known_only, leaving=leaving)

    async def close(self) -> None:
        await self.share_counts_now()  # the commands counted here still count elsewhere
        await self.readers.aclose()  # the followers' shared Pub/Sub connection
        await self.wiring.close()

    async def ping(self) -> None:
        await self.aio.ping()

    async def secret(self) -> bytes:
        if self._secret is None:
            # Generated once per deployment and kept in Redis: every gateway signs alike.
            key = f"{self._ns}:gateway:secret"
            await self.aio.set(key, secrets.token_hex(32), nx=True)
            self._secret = bytes(await self.aio.get(key))
        return self._secret

    # ---------------------------------------------------------------- players

    def _player_key(self, player: str) -> str:
        return f"{self._ns}:player:{player}"

    async def create_player(self, name: str, bot: str | None = None) -> PlayerRecord:
        """A new guest; or the bot of level ``bot`` named ``name``, one player wherever it
        sits (``bot_player_id``), so its ledger, rating and record are one, not one more
        for every seat a bot took (they grew with every bot table, and lasted)."""
        player = bot_player_id(bot, name) if bot else "p" + secrets.token_hex(8)
        key = self._player_key(player)
        fields = {"name": name, "bot": bot} if bot else {"name": name}
        # a record lives player_ttl_s after its last use (touch_players); a bot's is made
        # once and renewed by each seat it takes
        await self._coalesced.call(("HSET", key, *(x for kv in fields.items() for x in kv)),
                                   ("HSETNX", key, "created", str(time.time())),
                                   ("EXPIRE", key, self._player_ttl_s))
        self._touched_now([player], time.monotonic())
        return PlayerRecord(player, name, bot)

    def _touched_now(self, players: Sequence[str], now: float) -> None:
        if len(self._touched) + len(players) > PLAYERS_TOUCHED:  # a cache: forgetting costs a renewal each
            self._touched.clear()
        for player in players[:PLAYERS_TOUCHED]:
            self._touched[player] = now

    async def touch_players(self, ids: Sequence[str]) -> None:
        now = time.monotonic()
        every = min(self._player_ttl_s / 10, 3600.0)
        due = [p for p in set(ids) if now - self._touched.get(p, -every) >= every]
        if not due:
            return
        self._touched_now(due, now)
        # XX: only a record that expires (a guest's, a bot's); an account's has no TTL
        await self._coalesced.call(*(("EXPIRE", self._player_key(p), self._player_ttl_s, "XX") for p in due))

    async def players(self, ids: Sequence[str]) -> dict[str, PlayerRecord]:
        wanted = sorted(set(ids))
        if not wanted:
            return {}
        pipe = self.aio.pipeline(transaction=False)
        for player in wanted:
            pipe.hmget(self._player_key(player), ["name", "bot", "lang"])
        found: dict[str, PlayerRecord] = {}
        for player, (name, bot, lang) in zip(wanted, await pipe.execute(), strict=True):
            if name is not None:
                found[player] = PlayerRecord(player, name.decode(), None if bot is None else bot.decode(),
                                             None if lang is None else lang.decode())
        return found

    async def set_player_lang(self, player: str, lang: str) -> None:
        await self.aio.hset(self._player_key(player), "lang", lang)
        self._remember_lang(player, lang, time.monotonic())

    async def player_lang(self, player: str) -> str | None:
        now = time.monotonic()
        known = self._langs.get(player)
        if known is not None and now - known[1] < PLAYER_LANG_TTL_S:
            return known[0]
        raw = await self.aio.hget(self._player_key(player), "lang")
        lang = None if raw is None else bytes(raw).decode()
        self._remember_lang(player, lang, now)
        return lang

    def _remember_lang(self, player: str, lang: str | None, now: float) -> None:
        if len(self._langs) >= PLAYERS_TOUCHED:  # a cache: forgetting costs a read each
            self._langs.clear()
        self._langs[player] = (lang, now)

    async def player_ledger(self, player: str) -> PlayerLedger | None:
        keys = ProjectionKeys(self.space, "ledger")
        pipe = self.aio.pipeline(transaction=False)
        for partition in range(self.space.partitions):
            pipe.hget(keys.doc(partition, PLAYERS_DOC), player)
        parts = [decode_player(bytes(data)) for data in await pipe.execute() if data is not None]
        return combine(player, parts) if parts else None

    async def player_ratings(self, player: str) -> tuple[dict[str, PlayerRating], Reputation | None]:
        keys = RatingsKeys(self.space)
        rules = sorted(r.decode() for r in await self.aio.smembers(keys.rules))
        pipe = self.aio.pipeline(transaction=False)
        for name in rules:
            pipe.hget(keys.ratings(name), player)
        pipe.hget(keys.reputation, player)
        replies = await pipe.execute()
        ratings = {name: decode_rating(bytes(data)) for name, data in zip(rules, replies, strict=False)
                   if data is not None}
        return ratings, None if replies[-1] is None else decode_reputation(bytes(replies[-1]))

    async def leaderboard(self, rules: str, limit: int, *, min_hands: int, since_ms: int) -> list[PlayerRating]:
        keys = RatingsKeys(self.space)
        found: list[PlayerRating] = []
        start, page = 0, max(limit * 2, 50)
        while len(found) < limit:  # best first, past the players with too few or no recent hands
            players = await self.aio.zrevrange(keys.board(rules), start, start + page - 1)
            if not players:
                break
            start += page
            players = [p for p in players if not is_bot_player(bytes(p).decode())]
            if not players:
                continue
            for data in await self.aio.hmget(keys.ratings(rules), players):
                if data is None:
                    continue
                rating = decode_rating(bytes(data))
                if rating.hands >= min_hands and rating.last_ms >= since_ms:
                    found.append(rating)
        return found[:limit]

    async def server_ms(self) -> int:
        now_s, now_us = await self.aio.time()
        return int(now_s) * 1000 + int(now_us) // 1000

    # ---------------------------------------------------------------- commands

    async def submit(self, table_id: str, submission: Submission, command_id: str) -> Submitted:
        result = await self.handler.handle(table_id, submission, command_id=command_id)
        cached = self.handler.cached(table_id)
        state = cached[0] if cached is not None and cached[1] == result.version else None
        return Submitted(result.version, tuple(result.events), result.duplicate, state)

    async def state(self, table_id: str) -> tuple[TableState, int]:
        return await self.handler.state_of(table_id)

    async def events(self, table_id: str, after: int = 0, to: int | None = None) -> list[StoredEvent]:
        return await self.store.read(table_id, after, to)

    async def head(self, table_id: str) -> Head:
        return await self.store.head(table_id)

    async def audit_checkpoint(self, table_id: str) -> bytes | None:
        found = await self.aio.get(self.space.table(table_id).audit)
        return None if found is None else bytes(found)

    async def save_audit_checkpoint(self, table_id: str, data: bytes) -> None:
        await self.aio.set(self.space.table(table_id).audit, data)

    def cached(self, table_id: str) -> tuple[TableState, int] | None:
        return self.handler.cached(table_id)

    # ---------------------------------------------------------------- projections

    async def entry(self, table_id: str, *, fresh: bool = False) -> DirectoryEntry | None:
        keys = ProjectionKeys(self.space, "directory")
        partition = self.space.partition_of(table_id)
        if not fresh:
            pipe = self.aio.pipeline(transaction=False)
            pipe.hget(keys.doc(partition, DIRECTORY_DOC), table_id)
            pipe.hget(keys.doc(partition, CLOSED_DOC), table_id)
            for data in await pipe.execute():
                if data is not None:
                    return decode_entry(bytes(data))
        stored = await self.events(table_id)
        if not stored:
            return None
        entry = DirectoryEntry(table_id=table_id)
        for event in stored:
            entry = fold_directory(entry, event.version, decode_event(event.data))
        return entry

    async def entries(self) -> list[DirectoryEntry]:
        keys = ProjectionKeys(self.space, "directory")
        pipe = self.aio.pipeline(transaction=False)
        for partition in range(self.space.partitions):
            pipe.hvals(keys.doc(partition, DIRECTORY_DOC))
            pipe.hvals(keys.doc(partition, CLOSED_DOC))
        found = [decode_entry(bytes(data)) for values in await pipe.execute() for data in values]
        return sorted(found, key=lambda e: e.table_id)

    async def directory_ids(self, finished: bool | None = None) -> list[str]:
        keys = ProjectionKeys(self.space, "directory")
        docs = [d for d, closed in ((DIRECTORY_DOC, False), (CLOSED_DOC, True)) if finished in (None, closed)]
        pipe = self.aio.pipeline(transaction=False)
        for partition in range(self.space.partitions):
            for doc in docs:
                pipe.hkeys(keys.doc(partition, doc))
        return sorted({bytes(k).decode() for found in await pipe.execute() for k in found})

    async def entries_of(self, ids: Sequence[str]) -> list[DirectoryEntry]:
        keys = ProjectionKeys(self.space, "directory")
        pipe = self.aio.pipeline(transaction=False)
        for table_id in ids:
            partition = self.space.partition_of(table_id)
            pipe.hget(keys.doc(partition, CLOSED_DOC), table_id)  # a finished table's entry wins
            pipe.hget(keys.doc(partition, DIRECTORY_DOC), table_id)
        replies = await pipe.execute()
        found = (closed if closed is not None else live for closed, live in zip(replies[::2], replies[1::2], strict=True))
        return [decode_entry(bytes(data)) for data in found if data is not None]

    async def view(self, table_id: str, reader: str) -> bytes | None:
        return await self.readers.view(table_id, reader)

    def follow(self, table_id: str, reader: str, after: int,
               take: Callable[[bytes], bool] | None = None) -> AsyncIterator[bytes]:
        """Subscribe first, then read the stored view: a change published in between is
        not lost (``follow_async``, services/projection/notify.py); nothing not newer than
        the cursor is given."""
        return self.readers.follow(table_id, reader, after, take)

    async def ledger(self, table_id: str) -> AnyTableLedger | None:
        """The table's ledger document; an archived table's, whose document the archive
        deleted, folded from its archived events (docs/archive.md)."""
        found = await self.readers.table_ledger(table_id)
        if found is not None or not isinstance(self.store, AsyncArchivedEventStore):
            return found
        folded = self._archived_ledgers.get(table_id)
        if folded is not None:
            return folded  # an archived table never changes
        if await self.store.index_entry(table_id) is None:
            return None  # not archived: its ledger is not folded yet, or there is no such table
        stored = await self.store.read(table_id)
        folded = table_ledger_of(table_id, ((e.version, decode_event(e.data)) for e in stored))
        if len(self._archived_ledgers) >= ARCHIVED_LEDGERS:
            self._archived_ledgers.clear()  # a cache: folded again on demand
        self._archived_ledgers[table_id] = folded
        return folded

    async def deadline(self, table_id: str) -> bytes | None:
        """The table's deadline document. A change of a table's view is pushed to each
        of its readers' sockets at once, and each push asks for the deadline: the asks of
        one turn of the event loop go in one pipeline, one GET a table."""
        from services.bots.timers import deadline_key

        (stored,) = await self._coalesced.call(("GET", deadline_key(self.space, table_id)), shared=True)
        return None if stored is None else bytes(stored)

    # ---------------------------------------------------------------- operations

    async def lag_seconds(self) -> dict[str, float]:
        """Per kind, the age of the oldest feed entry it has not applied (0: caught up)."""
        pipe = self.aio.pipeline(transaction=False)
        for partition in range(self.space.partitions):
            pipe.xinfo_stream(self.space.feed(partition))
        for kind in KINDS:
            keys = ProjectionKeys(self.space, kind)
            for partition in range(self.space.partitions):
                pipe.hget(keys.checkpoint(partition), "id")
        replies = await pipe.execute(raise_on_error=False)
        p = self.space.partitions
        for reply in replies[p:]:  # an XINFO error is a feed not made yet (``last_given``)
            if isinstance(reply, Exception):
                raise reply
        heads = [last_given(info) for info in replies[:p]]  # the last entry each feed was given
        now_ms = time.time() * 1000
        lag: dict[str, float] = {}
        for k, kind in enumerate(KINDS):
            worst = 0.0
            for partition in range(p):
                raw = replies[p + k * p + partition]
                checkpoint = raw.decode() if raw is not None else START
                if heads[partition] != START and checkpoint != heads[partition]:
                    # behind: the first unapplied entry is at least as old as the one after the
                    # checkpoint, which is younger than the checkpoint itself
                    pending = await self.aio.xrange(self.space.feed(partition), f"({checkpoint}"
                                                    if checkpoint != START else "-", "+", count=1)
                    # none left: the kind was set back past what the feed keeps (its
                    # checkpoint kept off the AOF, a restart) and rebuilds; it is at
                    # least as far behind as the last entry the feed was given
                    oldest = pending[0][0].decode() if pending else heads[partition]
                    worst = max(worst, (now_ms - id_ms(oldest)) / 1000)
            lag[kind] = worst
        return lag

    async def dead_letters(self) -> dict[str, int]:
        # the streams the workers write (services/projection/store.py): one per kind and partition
        pipe = self.aio.pipeline(transaction=False)
        for kind in KINDS:
            keys = ProjectionKeys(self.space, kind)
            for partition in range(self.space.partitions):
                pipe.xlen(keys.dead(partition))
        counts = [int(n) for n in await pipe.execute()]
        p = self.space.partitions
        return {kind: sum(counts[k * p:(k + 1) * p]) for k, kind in enumerate(KINDS)}

    # ---------------------------------------------------------------- quotas (services/gateway/quotas.py)

    def _quota_key(self, player: str, name: str) -> str:
        # a player's keys share a hash tag: one script may name several on a cluster
        return f"{self._ns}:gateway:{{gw:{player}}}:{name}"

    async def count_quota(self, key: str, limit: int, window_s: int) -> float | None:
        now = time.time()
        full = f"{self._ns}:gateway:quota:{key}:{int(now // window_s)}"
        (counted,) = await self._coalesced.call(("EVAL", quotas.COUNT_SCRIPT, 1, full, limit, window_s + 1))
        return None if int(counted) else quotas.window_wait(window_s, now)

    async def admit_command(self, player: str, command_key: str, mark: str, limit: int,
                            window_s: int) -> quotas.Admission:
        # counted here, no Redis call; the counts are shared a moment later (command_rate.py)
        admission = self._rate.admit(player, command_key, mark, limit, window_s, time.time())
        self._window_s = window_s
        if self._rate.has_unshared() and not self._closing and (self._sharer is None or self._sharer.done()):
            self._sharer = asyncio.get_running_loop().create_task(self._share_while_counting())
        return admission

    async def _share_while_counting(self) -> None:
        """Share the counts every ``SHARE_S`` while there are any to share (one share in
        flight at a time: the next waits for its answer), then end."""
        while self._rate.has_unshared():
            await asyncio.sleep(command_rate.SHARE_S)
            await self._share_counts()

    async def _share_counts(self) -> None:
        """Write this gateway's count of each player counted since their last share into
        the window's hash (its own field: the count as it stands, so a write sent twice
        counts once) and read the hash back; each player's a call of its own in one
        pipeline, so one refused (a node of a cluster down) goes with the next share alone."""
        shares = self._rate.due()
        if not shares:
            return
        window_s = self._window_s or 1
        try:
            answers = await asyncio.gather(
                *(self._coalesced.call(("HSET", key, self._gateway_id, share.mine), ("EXPIRE", key, window_s + 1),
                                       ("HVALS", key))
                  for share in shares for key in (self._quota_key(share.player, f"rates:{share.window}"),)),
                return_exceptions=True)
        except BaseException:  # cancelled (the gateway stops): the counts go with the next share
            for share in shares:
                self._rate.not_shared(share)
            raise
        failed: BaseException | None = None
        for share, answer in zip(shares, answers, strict=True):
            if isinstance(answer, BaseException):
                self._rate.not_shared(share)
                failed = answer
            else:
                self._rate.shared(share, sum(int(count) for count in answer[2]))
        if failed is not None and not self._share_failing:
            log.warning("command_counts_not_shared", error=str(failed)[:200], players=len(shares))
        self._share_failing = failed is not None

    async def share_counts_now(self) -> None:
        """Share what is counted at once, and start no more sharing: the gateway is
        stopping, and what it counted still counts on the gateway its players go to next
        (a second at most: a store down or slow does not hold the stop)."""
        self._closing = True
        if self._sharer is not None:
            await sockets.stop(self._sharer)  # its counts in flight, if any, go with the last share
        with contextlib.suppress(Exception, TimeoutError):
            async with asyncio.timeout(SHARE_AT_STOP_S):
                await self._share_counts()

    async def take_seat(self, player: str, table: str, limit: int, ttl_s: int) -> int:
        (answer,) = await self._coalesced.call(("EVAL", quotas.SEAT_SCRIPT, 1, self._quota_key(player, "seats"),
                                                table, limit, repr(time.time()), ttl_s))
        return int(answer)

    async def held_seats(self, player: str) -> dict[str, float]:
        held = await self.aio.zrange(self._quota_key(player, "seats"), 0, -1, withscores=True)
        return {bytes(member).decode(): float(at) for member, at in held}

    async def drop_seats(self, player: str, tables: Sequence[str]) -> None:
        if tables:
            await self.aio.zrem(self._quota_key(player, "seats"), *tables)

    def _sockets_key(self, owner: str) -> str:
        return f"{self._ns}:gateway:{{sk:{owner}}}:sockets"

    async def hold_socket(self, owner: str, socket_id: str, limit: int, ttl_s: float) -> bool:
        (held,) = await self._coalesced.call(("EVAL", quotas.SOCKET_SCRIPT, 1, self._sockets_key(owner), socket_id,
                                              limit, repr(time.time()), ttl_s))
        return bool(int(held))

    async def renew_sockets(self, held: Mapping[str, Sequence[str]], ttl_s: float) -> None:
        until = repr(time.time() + ttl_s)
        await self._coalesced.call(*(("EVAL", quotas.SOCKET_RENEW_SCRIPT, 1, self._sockets_key(owner), until, ttl_s,
                                      *ids) for owner, ids in held.items() if ids))

    async def release_socket(self, owner: str, socket_id: str) -> None:
        await self._coalesced.call(("ZREM", self._sockets_key(owner), socket_id))

    async def claimed(self, key: str) -> str | None:
        held = await self.aio.get(f"{self._ns}:gateway:{key}")
        return None if held is None else bytes(held).decode()

    async def claim(self, key: str, value: str, ttl_s: int) -> str:
        full = f"{self._ns}:gateway:{key}"
        await self.aio.set(full, value, nx=True, ex=ttl_s)
        held = await self.aio.get(full)
        return value if held is None else bytes(held).decode()

    async def release(self, key: str, value: str) -> None:
        full = f"{self._ns}:gateway:{key}"
        await self.aio.eval(_RELEASE, 1, full, value)


class Coalesced:
    """Redis commands asked for in one turn of the event loop, sent together as one
    pipeline (not a transaction) once the tasks ready to run have had their turn: a push
    to a thousand sockets or a burst of commands costs a round trip, not one each.
    ``call(*commands)`` answers the replies of its commands; an error reply is raised to
    its caller only, a connection failure to every caller of the pipeline.
    ``shared=True``: a read asked for again in the same turn gets the first one's reply.

    A script asked for as ``("EVAL", body, ...)`` is sent by its digest (``EVALSHA``):
    Redis neither receives nor hashes the body on every call; one it does not hold (a
    restart, a failover, another node of a cluster) answers ``NOSCRIPT`` and is sent again
    whole, once, in a second pipeline (which loads it for the next calls), so it runs after
    the first pipeline's other commands: no order holds among callers of one turn anyway,
    and every script here is a call of its own."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._queued: list[tuple[tuple[tuple[Any, ...], ...], asyncio.Future[list[Any]]]] = []
        self._shared: dict[tuple[tuple[Any, ...], ...], asyncio.Future[list[Any]]] = {}

    async def call(self, *commands: tuple[Any, ...], shared: bool = False) -> list[Any]:
        if shared:  # shielded: one asker cancelled (its socket closed) cancels no other's
            return await asyncio.shield(self._shared.get(commands) or self._queue(commands, shared))
        return await self._queue(commands, shared)

    def _queue(self, commands: tuple[tuple[Any, ...], ...], shared: bool) -> asyncio.Future[list[Any]]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Any]] = loop.create_future()
        if not self._queued:
            loop.call_soon(self._flush)
        self._queued.append((commands, future))
        if shared:
            self._shared[commands] = future
        return future

    def _flush(self) -> None:
        queued, self._queued, self._shared = self._queued, [], {}
        task = asyncio.ensure_future(self._send(queued))
        _in_flight.add(task)
        task.add_done_callback(_in_flight.discard)

    async def _send(self, queued: list[tuple[tuple[tuple[Any, ...], ...], asyncio.Future[list[Any]]]]) -> None:
        flat = [command for commands, _ in queued for command in commands]
        try:
            replies = await self._pipeline([by_digest(command) for command in flat])
            unknown = [i for i, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
            if unknown:  # scripts this Redis does not hold yet: sent whole (EVAL loads them)
                for i, reply in zip(unknown, await self._pipeline([flat[i] for i in unknown]), strict=True):
                    replies[i] = reply
        except Exception as error:  # the connection: every caller gets it
            for _, future in queued:
                if not future.done():
                    future.set_exception(error)
            return
        at = 0
        for commands, future in queued:
            mine = replies[at:at + len(commands)]
            at += len(commands)
            if future.done():
                continue
            failed = next((r for r in mine if isinstance(r, Exception)), None)
            if failed is not None:
                future.set_exception(failed)
            else:
                future.set_result(mine)


    async def _pipeline(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        pipe = self._client.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*command)
        replies: list[Any] = await pipe.execute(raise_on_error=False)
        return replies


_in_flight: set[asyncio.Task[None]] = set()  # the pipelines being sent (kept from the GC)


@functools.cache
def script_digest(body: str) -> str:
    """A script's SHA1, as Redis names it in its script cache."""
    return hashlib.sha1(body.encode()).hexdigest()  # noqa: S324 - Redis's own naming, not security


def by_digest(command: tuple[Any, ...]) -> tuple[Any, ...]:
    """``("EVAL", body, ...)`` as ``("EVALSHA", digest, ...)``; any other command as it is."""
    if command and command[0] == "EVAL":
        return ("EVALSHA", script_digest(command[1]), *command[2:])
    return command


_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"

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
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from domain.codec import decode_event
from domain.table import Submission, TableEvent, TableState
from projections import KINDS
from projections.directory import CLOSED_DOC, DIRECTORY_DOC, DirectoryEntry, decode_entry
from projections.directory import fold as fold_directory
from projections.ledger import PLAYERS_DOC, AnyTableLedger, PlayerLedger, combine, decode_player
from services.projection.keys import ProjectionKeys
from services.projection.store import START, id_ms
from services.store.base import StoredEvent

if TYPE_CHECKING:
    from services.bootstrap import AsyncWiring


class PlayerRecord(msgspec.Struct, frozen=True):
    player: str
    name: str
    bot: str | None = None  # a bot's level; None for a person


class Submitted(msgspec.Struct, frozen=True):
    """What a command did: the table's version after it, its events, whether the command
    id had been handled before (then nothing was written now), and the state after."""

    version: int
    events: tuple[TableEvent, ...]
    duplicate: bool
    state: TableState | None


class Backend(Protocol):
    """What the routes need of the command path and the stores."""

    async def ping(self) -> None:
        """Return once the store answers; raise ``StoreUnavailable``/a Redis error if not."""
        ...

    async def secret(self) -> bytes:
        """The token secret every gateway of the deployment shares."""
        ...

    # players
    async def create_player(self, name: str, bot: str | None = None) -> PlayerRecord: ...

    async def players(self, ids: Sequence[str]) -> dict[str, PlayerRecord]: ...

    async def player_ledger(self, player: str) -> PlayerLedger | None: ...

    # the command path
    async def submit(self, table_id: str, submission: Submission, command_id: str) -> Submitted: ...

    async def state(self, table_id: str) -> tuple[TableState, int]:
        """The table's state and version, caught up from its stream (status "new": none)."""
        ...

    async def events(self, table_id: str) -> list[StoredEvent]: ...

    def cached(self, table_id: str) -> tuple[TableState, int] | None:
        """The table's state and version as this process last saw them, with no I/O (may
        be behind the store; None when not cached)."""
        ...

    # projections
    async def entry(self, table_id: str, *, fresh: bool = False) -> DirectoryEntry | None:
        """The table's lobby entry: the directory's, else (or when ``fresh``) folded from
        its stream (a change the directory may not show yet); None for no such table."""
        ...

    async def entries(self) -> list[DirectoryEntry]:
        """Every table of the directory, the finished ones too."""
        ...

    async def view(self, table_id: str, reader: str) -> bytes | None: ...

    def follow(self, table_id: str, reader: str, after: int) -> AsyncIterator[bytes]:
        """``reader``'s view each time it changes, from the first newer than ``after``."""
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

    async def take_command(self, player: str, limit: int, window_s: int) -> float | None:
        """Count one command against the player's limit; the seconds to wait when over."""
        ...

    async def claim(self, key: str, value: str, ttl_s: int) -> str:
        """Set ``key`` to ``value`` unless it is set; answer what it holds (a rematch's
        table: the first caller's wins)."""
        ...

    async def release(self, key: str, value: str) -> None:
        """Unset a claimed ``key`` if it still holds ``value``."""
        ...

    async def close(self) -> None: ...


class RedisBackend:
    """The backend over Redis, on one asyncio client: the async command path and readers
    of ``wiring``, and the gateway's own keys (players, rate limit, claims)."""

    def __init__(self, wiring: AsyncWiring) -> None:
        self.wiring = wiring
        self.space = wiring.space
        self.aio: Any = wiring.client
        self.store = wiring.store
        self.handler = wiring.handler
        self.readers = wiring.readers
        secret = wiring.settings.secret
        self._secret = secret.encode() if secret else None
        self._ns = self.space.namespace
        self._coalesced = Coalesced(self.aio)

    async def close(self) -> None:
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
        player = ("b" if bot else "p") + secrets.token_hex(8)
        fields = {"name": name, "created": str(time.time())}
        if bot:
            fields["bot"] = bot
        await self.aio.hset(self._player_key(player), mapping=fields)
        return PlayerRecord(player, name, bot)

    async def players(self, ids: Sequence[str]) -> dict[str, PlayerRecord]:
        wanted = sorted(set(ids))
        if not wanted:
            return {}
        pipe = self.aio.pipeline(transaction=False)
        for player in wanted:
            pipe.hmget(self._player_key(player), ["name", "bot"])
        found: dict[str, PlayerRecord] = {}
        for player, (name, bot) in zip(wanted, await pipe.execute(), strict=True):
            if name is not None:
                found[player] = PlayerRecord(player, name.decode(), None if bot is None else bot.decode())
        return found

    async def player_ledger(self, player: str) -> PlayerLedger | None:
        keys = ProjectionKeys(self.space, "ledger")
        pipe = self.aio.pipeline(transaction=False)
        for partition in range(self.space.partitions):
            pipe.hget(keys.doc(partition, PLAYERS_DOC), player)
        parts = [decode_player(bytes(data)) for data in await pipe.execute() if data is not None]
        return combine(player, parts) if parts else None

    # ---------------------------------------------------------------- commands

    async def submit(self, table_id: str, submission: Submission, command_id: str) -> Submitted:
        result = await self.handler.handle(table_id, submission, command_id=command_id)
        cached = self.handler.cached(table_id)
        state = cached[0] if cached is not None and cached[1] == result.version else None
        return Submitted(result.version, tuple(result.events), result.duplicate, state)

    async def state(self, table_id: str) -> tuple[TableState, int]:
        return await self.handler.state_of(table_id)

    async def events(self, table_id: str) -> list[StoredEvent]:
        return await self.store.read(table_id)

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

    async def view(self, table_id: str, reader: str) -> bytes | None:
        return await self.readers.view(table_id, reader)

    def follow(self, table_id: str, reader: str, after: int) -> AsyncIterator[bytes]:
        """Subscribe first, then read the stored view: a change published in between is
        not lost (``follow_async``, services/projection/notify.py); nothing not newer than
        the cursor is given."""
        return self.readers.follow(table_id, reader, after)

    async def ledger(self, table_id: str) -> AnyTableLedger | None:
        return await self.readers.table_ledger(table_id)

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
            pipe.xrevrange(self.space.feed(partition), count=1)
        for kind in KINDS:
            keys = ProjectionKeys(self.space, kind)
            for partition in range(self.space.partitions):
                pipe.hget(keys.checkpoint(partition), "id")
        replies = await pipe.execute()
        p = self.space.partitions
        heads = [found[0][0].decode() if found else START for found in replies[:p]]
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
                    if pending:
                        worst = max(worst, (now_ms - id_ms(pending[0][0].decode())) / 1000)
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

    async def take_command(self, player: str, limit: int, window_s: int) -> float | None:
        # a fixed window per player, in Redis: every gateway counts against the same limit
        now = time.time()
        window = int(now // window_s)
        key = f"{self._ns}:gateway:rate:{player}:{window}"
        # the counts of one turn of the event loop (many players' commands) share a pipeline
        count, _ = await self._coalesced.call(("INCR", key), ("EXPIRE", key, window_s + 1))
        if int(count) <= limit:
            return None
        return max((window + 1) * window_s - now, 0.001)

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
    ``shared=True``: a read asked for again in the same turn gets the first one's reply."""

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
        pipe = self._client.pipeline(transaction=False)
        for commands, _ in queued:
            for command in commands:
                pipe.execute_command(*command)
        try:
            replies = await pipe.execute(raise_on_error=False)
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


_in_flight: set[asyncio.Task[None]] = set()  # the pipelines being sent (kept from the GC)


_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"

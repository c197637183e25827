"""The one wiring point: ``Settings`` in, the parts a process runs on out.

Every process and CLI command builds what it uses here (the demo, the audit commands,
the projections commands, the workers; the gateway later), so a setting means the same
thing everywhere and nothing builds its own client or store behind the settings' back:

    settings = settings_from(args)       # services/settings.py: flags, then environment
    wired = bootstrap(settings)          # client, key space, event store, handler, readers
    wired.worker("views").run(stop)      # or wired.handler.handle(...), wired.readers.lobby()
    wired.archive_worker().run(stop)     # closed tables into PostgreSQL (docs/archive.md)

``wire_async(client, settings)`` builds the asyncio parts (``AsyncRedisEventStore``,
``AsyncCommandHandler``, ``AsyncReader``) the same way, and ``bootstrap_gateway(settings)``
the gateway's backend on them.

``wire(client, settings)`` does the same for a client that already exists (tests, a
process that made its own connection). Only a command that starts a Redis of its own
(``mighty demo``; ``serve`` later) may run without ``redis_url``: ``run_redis`` gives it
one; every other command is refused by ``bootstrap`` with ``NoStoreConfigured``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import redis
import structlog

from domain.table import Submission, TableEvent, TableState
from services.archive.postgres import PostgresArchive
from services.archive.reads import ArchivedEventStore, AsyncArchivedEventStore
from services.commands.handler import AsyncCommandHandler
from services.commands.tables import TableDecider, TableHandler, table_handler
from services.projection.keys import ProjectionKeys
from services.projection.rater import KIND as RATINGS_KIND
from services.projection.rater import Rater
from services.projection.read import AsyncReader, Readers
from services.projection.store import ProjectionStore
from services.projection.worker import Worker
from services.redis_runtime import RunRedis, redis_for_run
from services.settings import Settings, SettingsError
from services.store.async_redis_store import AsyncRedisEventStore, connect_async
from services.store.cluster import AsyncClient, SyncClient, is_cluster
from services.store.keys import KeySpace
from services.store.redis_store import connect, store_error

if TYPE_CHECKING:
    from services.archive.worker import ArchiveWorker

if TYPE_CHECKING:  # the gateway's modules load only for the gateway
    from services.gateway.backend import RedisBackend

log = structlog.get_logger("mighty.bootstrap")


class NoStoreConfigured(SettingsError):
    """A command that needs an existing store was given no Redis URL: it refuses to guess
    one (127.0.0.1:6379 may be anybody's Redis)."""

    def __init__(self) -> None:
        super().__init__("no store given: set REDIS_URL (or --redis-url) to the Redis the tables live in")


@dataclass
class Wiring:
    """What a process runs on, built from one ``Settings``."""

    settings: Settings
    client: SyncClient  # one node's, or a cluster's (REDIS_URL redis+cluster://)
    space: KeySpace
    # the Redis event store whose reads fall through to the archive for archived tables
    store: ArchivedEventStore
    handler: TableHandler
    readers: Readers
    archive: PostgresArchive | None = None  # None: MIGHTY_ARCHIVE_URL not set
    _projection_stores: dict[str, ProjectionStore] = field(default_factory=dict)

    def projection_store(self, kind: str) -> ProjectionStore:
        """The stored projection of ``kind`` (views, ledger, directory)."""
        if kind not in self._projection_stores:
            self._projection_stores[kind] = ProjectionStore(self.client, ProjectionKeys(self.space, kind))
        return self._projection_stores[kind]

    def worker(self, kind: str, **options: Any) -> Worker:
        """A projection worker of ``kind`` on this store (options: ``Worker``'s). A worker
        of the kind ``ratings`` also runs the rater over every partition when it holds
        its lease (services/projection/rater.py)."""
        if kind == RATINGS_KIND and "after_step" not in options:
            options["after_step"] = Rater(self.client, self.space, lease_ms=options.get("lease_ms", 3000)).tick
        return Worker(self.projection_store(kind), self.store, **options)

    def archive_worker(self, **options: Any) -> ArchiveWorker:
        """The archive worker (options: ``ArchiveWorker``'s); needs ``archive_url``."""
        from services.archive.worker import ArchiveWorker

        if self.archive is None:
            raise SettingsError("the archive worker needs PostgreSQL: set MIGHTY_ARCHIVE_URL (or --archive-url)")
        options.setdefault("after_s", self.settings.archive_after_s)
        return ArchiveWorker(self.store, self.archive, **options)

    def close(self) -> None:
        if self.archive is not None:
            self.archive.close()
        self.client.close()


def key_space(settings: Settings) -> KeySpace:
    return KeySpace(settings.partitions, namespace=settings.namespace)


def wire(client: SyncClient, settings: Settings) -> Wiring:
    """The parts on an existing client."""
    space = key_space(settings)
    archive = (PostgresArchive(settings.archive_url, namespace=space.namespace)
               if settings.archive_url else None)  # connects on first use
    store = ArchivedEventStore(client, keys=space, idempotency_s=settings.idempotency_s, archive=archive,
                               wait_replicas=settings.wait_replicas, wait_timeout_ms=settings.replica_timeout_ms)
    return Wiring(settings, client, space, store, table_handler(store), Readers(client, space), archive)


def bootstrap(settings: Settings) -> Wiring:
    """The parts on the store ``settings.redis_url`` names; ``NoStoreConfigured`` without one.

    Connecting is lazy (redis-py connects on the first command), so a Redis that is down
    shows up as ``StoreUnavailable`` on first use, which the CLI reports as exit 4. A
    cluster's client asks for the slot map at once: a cluster that cannot be reached
    raises ``StoreUnavailable`` here."""
    if not settings.redis_url:
        raise NoStoreConfigured()
    try:
        client = connect(settings.redis_url)
    except redis.RedisError as error:
        raise store_error(error) from error
    return wire(client, settings)


@dataclass
class AsyncWiring:
    """What an asyncio process (the gateway) runs on, built from one ``Settings``: the
    same key space and idempotency window as ``Wiring``, on an asyncio client."""

    settings: Settings
    client: AsyncClient
    space: KeySpace
    store: AsyncRedisEventStore
    handler: AsyncCommandHandler[TableState, Submission, TableEvent]
    readers: AsyncReader
    archive: PostgresArchive | None = None  # None: MIGHTY_ARCHIVE_URL not set

    async def close(self) -> None:
        await self.client.aclose()
        if self.archive is not None:
            self.archive.close()


def wire_async(client: AsyncClient, settings: Settings) -> AsyncWiring:
    """The asyncio parts on an existing asyncio client."""
    space = key_space(settings)
    archive = (PostgresArchive(settings.archive_url, namespace=space.namespace)
               if settings.archive_url else None)  # connects on first use
    # reads fall through to PostgreSQL for an archived table, as Wiring's store's do
    store = AsyncArchivedEventStore(client, keys=space, idempotency_s=settings.idempotency_s,
                                    archive=archive, wait_replicas=settings.wait_replicas,
                                    wait_timeout_ms=settings.replica_timeout_ms)
    handler: AsyncCommandHandler[TableState, Submission, TableEvent] = AsyncCommandHandler(
        store, TableDecider()
    )
    return AsyncWiring(settings, client, space, store, handler, AsyncReader(client, space), archive)


def wire_gateway(async_client: AsyncClient, settings: Settings) -> RedisBackend:
    """The gateway's backend (``services/gateway/backend.py``) on an existing asyncio
    client: the async command path and readers of ``wire_async``, on the same key space
    and idempotency window every other process gets."""
    from services.gateway.backend import RedisBackend

    return RedisBackend(wire_async(async_client, settings))


def bootstrap_gateway(settings: Settings) -> RedisBackend:
    """The gateway's backend on the store ``settings.redis_url`` names (connected
    lazily); ``NoStoreConfigured`` without one."""
    if not settings.redis_url:
        raise NoStoreConfigured()
    return wire_gateway(connect_async(settings.redis_url), settings)


def run_redis(settings: Settings, stack: contextlib.ExitStack, *, cluster: bool = False,
              own_session: bool = False) -> tuple[Settings, RunRedis]:
    """For a command that may start its own Redis: the settings with ``redis_url`` filled
    in (``REDIS_URL`` when given, else a private redis-server on the settings' durability
    profile, or with ``cluster`` a local cluster of six nodes, else an embedded fake
    Redis), and which it is. What is started stops when ``stack`` closes.

    The ``replicated`` profile needs replicas: it is refused on a Redis this command
    would start alone (use ``cluster``, or give ``REDIS_URL``). ``own_session``: a
    redis-server started here is out of this process's group (``redis_for_run``)."""
    if settings.durability == "replicated" and not settings.redis_url and not cluster:
        raise SettingsError("the replicated durability profile needs a Redis with replicas: "
                            "add --cluster (a local cluster) or set REDIS_URL")
    redis_ = redis_for_run(stack, settings.redis_url, appendfsync=settings.fsync, cluster=cluster,
                           own_session=own_session)
    return msgspec.structs.replace(settings, redis_url=redis_.url), redis_


def check_durability(client: SyncClient, settings: Settings) -> str | None:
    """Warn (log) when the Redis fsyncs less often than the durability profile asks, or
    (``replicated``) a primary has no replica; the Redis's ``appendfsync`` (None when it
    will not say: CONFIG disabled, or no AOF). On a cluster every node is asked, and the
    weakest answer counts."""
    clients: list[Any]
    if is_cluster(client):
        cluster: Any = client
        clients = [cluster.get_redis_connection(node) for node in cluster.get_nodes()]
    else:
        clients = [client]
    profiles = [profile for profile in (_node_durability(node, settings) for node in clients) if profile]
    if not profiles:
        return None
    weakest = min(profiles, key=lambda profile: _STRENGTH.get(profile, -1))
    wanted = settings.fsync
    if weakest != wanted and not (weakest == "always" and wanted == "everysec"):
        log.warning("redis durability differs from the profile", wanted=settings.durability, redis=weakest)
    return weakest


_STRENGTH = {"no-aof": 0, "no": 1, "everysec": 2, "always": 3}


def _node_durability(client: Any, settings: Settings) -> str | None:
    try:
        appendonly = client.config_get("appendonly").get("appendonly")
        fsync = client.config_get("appendfsync").get("appendfsync")
        if settings.durability == "replicated":
            replication = client.info("replication")
            if replication.get("role") == "master" and int(replication.get("connected_slaves", 0)) < 1:
                log.warning("replicated durability: a primary has no replica; every append will be refused",
                            port=client.connection_pool.connection_kwargs.get("port"))
    except (redis.RedisError, AttributeError):  # refused, or down: the worker rides that out
        return None
    if appendonly is None or fsync is None:
        return None
    return "no-aof" if appendonly in ("no", b"no") else (fsync.decode() if isinstance(fsync, bytes) else str(fsync))

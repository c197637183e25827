"""The event store on Redis for asyncio (``redis.asyncio``): the same keys, the same
``append.lua``, the same answers and typed errors as ``RedisEventStore`` (docs/store.md).

Appends are pipelined. An append does not go to Redis on its own: it joins a queue, and
once every task that is ready to run has had its turn (one ``call_soon``), or once
``batch`` appends wait, the queue goes to Redis as one pipeline of EVALSHAs on one
connection: one write, the replies read back to back, however many tables are in flight. While that pipeline is out, the next appends gather for the
next one. A pipeline is not a transaction: each EVALSHA is its own atomic append, and
each caller gets its own reply (a conflict for one table is nobody else's).

The script is not preloaded (a constructor cannot await): the first EVALSHA of a fresh
server answers NOSCRIPT, the script is loaded, and the EVALSHAs that were refused are
sent again. A connection error sends again what is still unanswered, then fails it with
``StoreUnavailable`` once the client's retries are spent; retrying is safe because the
script answers a command id it has seen with its first outcome.

On Redis Cluster a queue is split by node (the primary of each append's slot) and each
node's share goes as one pipeline on one of its connections, all nodes at once; what a
node redirects (MOVED, ASK), refuses for now (a failover, TRYAGAIN) or could not be
sent to is sent again on the new slot map, for a few seconds (``CLUSTER_ATTEMPTS``).
With the ``replicated`` durability profile each pipeline ends with an INCR of a
partition's fence and one WAIT (WAITAOF when the server has it) that covers every append
of it: an append no replica acknowledged in time fails with ``NotReplicated``
(services/store/redis_store.py, docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final

import redis
import redis.asyncio as aioredis
import redis.asyncio.cluster as aiocluster
from hiredis import pack_command
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff

from services.store.base import Appended, FeedEntry, Head, StoredEvent
from services.store.cluster import (
    CLUSTER_UNAVAILABLE,
    AsyncClient,
    connect_cluster_async,
    is_cluster_url,
)
from services.store.errors import NotReplicated
from services.store.keys import KeySpace, check_command_id, fence_of
from services.store.packing import packing_fast
from services.store.redis_store import (
    APPEND_SCRIPT,
    CLUSTER_ATTEMPTS,
    DEFAULT_WAIT_TIMEOUT_MS,
    StreamRead,
    append_call,
    appended,
    feed_entry,
    feed_start,
    idempotency_ms,
    outcome_command,
    parse_head,
    replicas_acknowledged,
    store_error,
    waitaof_unknown,
)
from services.store.replies import HiredisReplies
from services.store.table_index import indexed_tables_async

# Appends per pipeline at most: once this many are queued they go at once. Smaller
# pipelines let Redis start sooner but cost the client more CPU per append (a write and
# a wake-up each): 16 a pipeline cost ~15% more than 256 (docs/performance.md).
DEFAULT_BATCH: Final = 256
CLUSTER_CONNECTIONS: Final = 256  # per node, at least, for an asyncio cluster client


def connect_async(
    url: str,
    *,
    retries: int = 6,
    socket_timeout: float = 5.0,
    max_connections: int = 16,
) -> AsyncClient:
    """An asyncio client for the store, set up as ``connect`` sets up the sync one
    (bytes replies, RESP2 pinned, retries with backoff); a cluster's
    (``redis.asyncio.cluster.RedisCluster``, ``max_connections`` per node) for a
    ``redis+cluster://`` URL.

    Its pool *waits* for a free connection (up to ``socket_timeout``) rather than failing
    when ``max_connections`` are in use: a gateway has far more requests in flight than
    it should open connections, and appends share a connection per pipeline anyway.
    """
    if is_cluster_url(url):
        # per node; a cluster node's pool does not wait for a free connection, it refuses
        # (MaxConnectionsError, an outage to the callers): room for a gateway's reads
        return connect_cluster_async(url, retries=retries, socket_timeout=socket_timeout,
                                     max_connections=max(max_connections, CLUSTER_CONNECTIONS))
    retry = Retry(ExponentialWithJitterBackoff(cap=0.5, base=0.01), retries)
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=socket_timeout,
        protocol=2,
        decode_responses=False,
        retry=retry,
        retry_on_error=[redis.ConnectionError, redis.TimeoutError],
        socket_timeout=socket_timeout,
        socket_connect_timeout=min(socket_timeout, 2.0),
        health_check_interval=0,
    )
    pool.connection_class = packing_fast(pool.connection_class)  # packed by hiredis in one call (packing.py)
    client: aioredis.Redis = aioredis.Redis.from_pool(pool)
    return client


@contextmanager
def _redis_errors() -> Iterator[None]:
    try:
        yield
    except (redis.RedisError, *CLUSTER_UNAVAILABLE) as error:
        raise store_error(error) from error


_Pending = tuple[list[str], list[Any], "asyncio.Future[Any]"]
# What a cluster node answers (or raises) that sends an append again on a fresh slot map.
_RESEND = (redis.exceptions.MovedError, redis.exceptions.AskError, redis.exceptions.TryAgainError,
           redis.exceptions.ClusterDownError, redis.exceptions.MasterDownError)
_UNREACHABLE = (redis.ConnectionError, redis.TimeoutError, redis.exceptions.SlotNotCoveredError, OSError)


class AsyncRedisEventStore:
    """``AsyncEventStore`` on Redis. Use it from one event loop (the client's)."""

    def __init__(
        self,
        client: AsyncClient,
        *,
        keys: KeySpace | None = None,
        script: str = APPEND_SCRIPT,
        idempotency_s: float | None = None,
        batch: int = DEFAULT_BATCH,
        wait_replicas: int = 0,
        wait_timeout_ms: int = DEFAULT_WAIT_TIMEOUT_MS,
    ) -> None:
        self.client: Any = client
        self.keys = keys or KeySpace()
        # command ids are forgotten after this window, as RedisEventStore's; 0: never
        self.idempotency_ms = idempotency_ms(idempotency_s)
        # the replicated durability profile, as RedisEventStore's
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = wait_timeout_ms
        self.waitaof: bool | None = None
        self._cluster = isinstance(client, aiocluster.RedisCluster)
        self._script = script
        self._sha: str = hashlib.sha1(script.encode()).hexdigest()  # what SCRIPT LOAD answers
        self.batch = batch
        self._queue: list[_Pending] = []
        self._queue_loop: asyncio.AbstractEventLoop | None = None  # the loop of the queued
        self._sending: set[asyncio.Task[None]] = set()  # held so they are not collected

    @property
    def script_sha(self) -> str:
        return self._sha

    async def append(
        self,
        table_id: str,
        events: Sequence[bytes],
        *,
        expected: Head,
        command_id: str,
        outcome: bytes,
    ) -> Appended:
        keys, args = append_call(self.keys, table_id, events, expected, command_id, outcome,
                                 self.idempotency_ms)
        reply = await self.append_raw(keys, args)
        return appended(reply, expected, outcome)

    def append_raw(self, keys: list[str], args: list[Any]) -> asyncio.Future[Any]:
        """The bare script call, pipelined with the others: no checks, no parsing."""
        queue = self._queue
        if queue:
            # The loop that queued the first: every task that can join a queue before
            # it is flushed (call_soon) runs there. asyncio.get_running_loop() makes a
            # getpid system call each time, which cost ~5 % of the async path's CPU.
            loop = self._queue_loop
            assert loop is not None
        else:
            loop = self._queue_loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        queue.append((keys, args, future))
        if len(queue) == 1:
            loop.call_soon(self._flush)  # after every task ready now has queued its append
        elif len(queue) >= self.batch:
            self._flush()  # no need to wait: Redis works on these while we decide the next
        return future

    def _flush(self) -> None:
        if self._queue:
            batch, self._queue = self._queue, []
            loop = self._queue_loop
            assert loop is not None
            task = loop.create_task(self._send(batch))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send(self, batch: list[_Pending]) -> None:
        try:
            if self._cluster:
                await self._on_the_nodes(batch)
            else:
                unknown = await self._on_a_connection(batch)
                if unknown:  # NOSCRIPT: a restarted or flushed server; load, send those again
                    self._sha = await self._load_script()
                    await self._on_a_connection(unknown)
        except BaseException as error:
            for _, _, future in batch:
                if future.done():
                    continue
                if isinstance(error, asyncio.CancelledError):
                    future.cancel()
                else:
                    future.set_exception(_typed(error))
            if not isinstance(error, Exception):
                raise

    async def _on_a_connection(self, batch: list[_Pending]) -> list[_Pending]:
        """Send ``batch`` as one pipeline on one pooled connection; retried (what is still
        unanswered) on a connection error, as the client retries a command. Sent by hand
        rather than through redis-py's ``Pipeline``, whose per-command bookkeeping cost
        more than the append: packed by hiredis in C, replies read back to back under one
        timeout, each caller woken as its reply is read."""
        pool: Any = self.client.connection_pool
        connection = await pool.get_connection()
        try:
            unknown: list[_Pending] = await connection.retry.call_with_retry(
                lambda: self._exchange(connection, batch),
                lambda error: connection.disconnect(),
            )
            return unknown
        finally:
            await pool.release(connection)

    async def _on_the_nodes(self, batch: list[_Pending]) -> None:
        """The cluster's ``_on_a_connection``: each node's share of ``batch`` as one
        pipeline on one of its connections, every node at once; what comes back
        redirected, refused for now, or unsent goes again on a fresh slot map."""
        cluster = self.client
        await cluster.initialize()  # the slot map, once (a no-op after the first)
        todo = batch
        asked: dict[int, tuple[str, int]] = {}  # id(future) -> the node an ASK named
        last: BaseException | None = None
        for attempt in range(CLUSTER_ATTEMPTS):
            groups: dict[tuple[str, bool], tuple[Any, list[_Pending]]] = {}
            for item in todo:
                if item[2].done():
                    continue
                target = asked.get(id(item[2]))
                node = cluster.get_node(host=target[0], port=target[1]) if target else None
                asking = node is not None
                node = node or cluster.get_node_from_key(item[0][0])
                groups.setdefault((node.name, asking), (node, []))[1].append(item)
            if not groups:
                return
            shares = list(groups.items())
            results = await asyncio.gather(
                *(self._on_a_node(node, items, asking) for (_, asking), (node, items) in shares),
                return_exceptions=True)
            todo, asked, unknown, refresh = [], {}, False, False
            for ((_, _asking), (_node, items)), result in zip(shares, results, strict=True):
                if isinstance(result, asyncio.CancelledError):
                    raise result
                if isinstance(result, _UNREACHABLE):
                    last, refresh = result, True
                    todo.extend(items)  # what is unanswered of them (done ones are skipped)
                    continue
                if isinstance(result, BaseException):
                    raise result
                for item, error in result:
                    if isinstance(error, redis.exceptions.NoScriptError):
                        unknown = True
                    elif isinstance(error, redis.exceptions.AskError):
                        asked[id(item[2])] = (error.host, int(error.port))
                    else:
                        last, refresh = error, True
                        if isinstance(error, redis.exceptions.MovedError):
                            await cluster.nodes_manager.move_slot(error)
                    todo.append(item)
            if not todo:
                return
            if unknown:  # a node without the script (a promoted replica): load it everywhere
                self._sha = await self._load_script()
            if refresh:
                await asyncio.sleep(min(0.5, 0.02 * 2 ** attempt))
                with contextlib.suppress(redis.RedisError, OSError):
                    await cluster.nodes_manager.initialize()
        error = last if isinstance(last, redis.RedisError) else redis.ConnectionError(str(last))
        for _, _, future in todo:
            if not future.done():
                future.set_exception(_typed(error))

    async def _on_a_node(self, node: Any, batch: list[_Pending], asking: bool) -> list[tuple[_Pending, Exception]]:
        """One node's share on one of its connections (``_exchange``); the appends to
        send again, with why."""
        connection = node.acquire_connection()
        try:
            await node.disconnect_if_needed(connection)  # marked by a slot-map refresh
            resend: list[tuple[_Pending, Exception]] = await self._exchange(
                connection, batch, asking=asking, cluster=True)
            return resend
        except AttributeError as error:
            # redis-py closes every node's connections, in use or not, when it gives up
            # on its slot map (RedisCluster.aclose, after repeated MOVED answers): a
            # connection closed under us mid-send has no writer any more. An outage.
            await connection.disconnect(nowait=True)
            raise redis.ConnectionError(f"the connection was closed under the append: {error}") from error
        except BaseException:
            await connection.disconnect(nowait=True)
            raise
        finally:
            node.release(connection)

    async def _exchange(self, connection: Any, batch: list[_Pending], *, asking: bool = False,
                        cluster: bool = False) -> Any:
        """Send ``batch``'s EVALSHAs as one pipeline on ``connection`` and read the
        replies, waking each caller as its reply is read (with ``wait_replicas``: once
        the WAIT's is). Answers the appends to send again: on one node those NOSCRIPT
        refused; on a cluster (``cluster``) also those redirected or refused for now,
        each with its error."""
        todo = [item for item in batch if not item[2].done()]
        if not todo:
            return []
        sha = self._sha
        packed = []
        for keys, args, _ in todo:
            if asking:  # ASKING holds for the one command after it
                packed.append(pack_command(("ASKING",)))
            packed.append(pack_command(("EVALSHA", sha, len(keys), *keys, *args)))
        waiting = self.wait_replicas > 0
        if waiting:
            fence: tuple[Any, ...] = ("INCR", fence_of(todo[0][0][0]))
            packed.append(pack_command(fence))
            wait = self._wait_command()
            packed.append(pack_command(wait))
        resend: list[tuple[_Pending, Exception]] = []
        held: list[tuple[_Pending, Any]] = []  # replicated: replies kept until the WAIT's
        try:
            async with asyncio.timeout(connection.socket_timeout or None):
                await connection.send_packed_command(packed, check_health=False)
                replies = HiredisReplies.of(connection)  # after: sending may (re)connect

                async def read() -> Any:
                    if replies is None:
                        try:  # math.inf: no timeout of its own, the batch has one
                            return await connection.read_response(timeout=math.inf)
                        except (redis.ResponseError, redis.exceptions.BusyLoadingError) as refused:
                            return refused  # a reply (LOADING too), not a lost connection
                    reply = replies.gets()
                    while reply is replies.not_enough_data:
                        await replies.read_more()
                        reply = replies.gets()
                    return reply

                for item in todo:
                    if asking:
                        await read()  # ASKING's +OK
                    reply = await read()
                    future = item[2]
                    # an error reply, of any class: hiredis hands LOADING back as a
                    # BusyLoadingError, which is a ConnectionError, not a ResponseError
                    if isinstance(reply, redis.RedisError):
                        if isinstance(reply, redis.exceptions.NoScriptError) or (cluster and isinstance(reply, _RESEND)):
                            resend.append((item, reply))
                        elif not future.done():
                            future.set_exception(_typed(reply))
                    elif waiting:
                        held.append((item, reply))
                    elif not future.done():  # done: its caller was cancelled
                        future.set_result(reply)
                if waiting:
                    await read()  # the fence's INCR
                    waited = await read()
                    if wait[0] == "WAITAOF" and waitaof_unknown(waited):
                        self.waitaof = False  # WAITAOF came with Redis 7.2: WAIT, on the same connection
                        await connection.send_packed_command([pack_command(self._wait_command())],
                                                             check_health=False)
                        waited = await read()
                    self._settle_replicated(held, waited)
        except TimeoutError:
            await connection.disconnect(nowait=True)  # replies may still be on the way
            raise redis.TimeoutError("Timeout reading the append replies from Redis") from None
        if cluster:
            return resend
        return [item for item, _ in resend]

    def _wait_command(self) -> tuple[Any, ...]:
        if self.waitaof is False:
            return ("WAIT", self.wait_replicas, self.wait_timeout_ms)
        return ("WAITAOF", 0, self.wait_replicas, self.wait_timeout_ms)

    def _settle_replicated(self, held: list[tuple[_Pending, Any]], waited: Any) -> None:
        """Wake the callers of a pipeline's appends once its WAIT answered: those that
        wrote (or had written: duplicates) fail with ``NotReplicated`` unless enough
        replicas acknowledged; the refusals are answered as they are."""
        acknowledged: int | None = None
        if isinstance(waited, list):  # WAITAOF: [local fsyncs, replica fsyncs]
            self.waitaof = True
            acknowledged = int(waited[1])
        elif isinstance(waited, int):
            acknowledged = waited
        for (_, _, future), reply in held:
            if future.done():
                continue
            wrote = isinstance(reply, list) and reply[:1] in ([b"ok"], [b"dup"])
            if not wrote:
                future.set_result(reply)
            elif acknowledged is None:
                future.set_exception(_typed(waited) if isinstance(waited, BaseException)
                                     else redis.ResponseError(f"unexpected WAIT reply {waited!r}"))
            elif acknowledged < self.wait_replicas:
                future.set_exception(NotReplicated(self.wait_timeout_ms, acknowledged))
            else:
                future.set_result(reply)

    async def _load_script(self) -> str:
        sha = await self.client.script_load(self._script)
        return sha.decode() if isinstance(sha, bytes) else str(sha)

    async def read(
        self, table_id: str, after_version: int = 0, to_version: int | None = None
    ) -> list[StoredEvent]:
        key = self.keys.table(table_id).events
        reading = StreamRead(after_version, to_version)  # as RedisEventStore.read
        with _redis_errors():
            while (query := reading.next_range()) is not None:
                reading.take(await self.client.xrange(key, *query))
        return reading.events

    async def table_ids(self) -> list[str]:
        found: list[str] = []
        with _redis_errors():
            for partition in range(self.keys.partitions):
                found.extend(await indexed_tables_async(self.client, self.keys, partition))
        return sorted(found)

    async def head(self, table_id: str) -> Head:
        key = self.keys.table(table_id).meta
        with _redis_errors():
            reply: Any = await self.client.hmget(key, ["v", "h"])
        return parse_head(reply)

    async def outcome_of(self, table_id: str, command_id: str) -> bytes | None:
        """As the sync store's: with ``wait_replicas``, given only once a replica holds
        what the primary held when it was read (``_fenced``)."""
        command = outcome_command(self.keys.table(table_id), check_command_id(command_id))
        with _redis_errors():
            if self.wait_replicas:
                found: Any = await self._fenced(command[3], command)
            else:
                found = await self.client.execute_command(*command)
        return None if found is None else bytes(found)

    async def _fenced(self, key: str, command: tuple[Any, ...]) -> Any:
        """``command``, the fence's INCR and the WAIT, in order on one connection of the
        primary serving ``key``'s slot; ``NotReplicated`` when too few replicas
        acknowledged (the sync store's ``_fenced``)."""
        for _ in range(2):
            commands = [command, ("INCR", fence_of(key)), self._wait_command()]
            if self._cluster:
                replies = await self._on_the_primary(key, commands)
            else:
                pipe: Any = self.client.pipeline(transaction=False)
                for each in commands:
                    pipe.execute_command(*each)
                replies = await pipe.execute(raise_on_error=False)
            reply, _, waited = replies
            if self.waitaof is not False and waitaof_unknown(waited):
                self.waitaof = False  # WAITAOF came with Redis 7.2: WAIT
                continue
            break
        if isinstance(reply, Exception):
            raise reply
        acknowledged = replicas_acknowledged(waited)
        if isinstance(waited, list):
            self.waitaof = True
        if acknowledged < self.wait_replicas:
            raise NotReplicated(self.wait_timeout_ms, acknowledged)
        return reply

    async def _on_the_primary(self, key: str, commands: list[tuple[Any, ...]]) -> list[Any]:
        """``commands`` in order on one connection of the node serving ``key``'s slot,
        their replies (an error reply as its exception, not raised)."""
        cluster = self.client
        await cluster.initialize()
        node = cluster.get_node_from_key(key)
        connection = node.acquire_connection()
        try:
            await node.disconnect_if_needed(connection)
            await connection.send_packed_command(connection.pack_commands(commands), check_health=True)
            replies: list[Any] = []
            for _ in commands:
                try:
                    replies.append(await connection.read_response())
                except redis.ResponseError as error:
                    replies.append(error)
            return replies
        except BaseException:
            await connection.disconnect(nowait=True)
            raise
        finally:
            node.release(connection)

    def partition_of(self, table_id: str) -> int:
        return self.keys.partition_of(table_id)

    async def read_feed(
        self, partition: int, after: str = "0-0", count: int = 100
    ) -> list[FeedEntry]:
        with _redis_errors():
            entries: Any = await self.client.xrange(
                self.keys.feed(partition), feed_start(after), "+", count=count
            )
        return [feed_entry(entry_id, fields) for entry_id, fields in entries]


def _typed(error: BaseException) -> BaseException:
    """A store error for a Redis error (one per caller: an exception raised in several
    tasks would share one traceback); anything else as it is."""
    if not isinstance(error, (redis.RedisError, *CLUSTER_UNAVAILABLE)):
        return error
    typed = store_error(error)
    typed.__cause__ = error
    return typed

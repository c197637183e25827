"""The event store on Redis for asyncio (``redis.asyncio``): the same keys, the same
``append.lua``, the same answers and typed errors as ``RedisEventStore`` (docs/store.md).

Appends are pipelined. An append does not go to Redis on its own: it joins a queue, and
once every task that is ready to run has had its turn (one ``call_soon``), the queue goes
to Redis as one pipeline of EVALSHAs on one connection: one write, one read, however
many tables are in flight. While that pipeline is out, the next appends gather for the
next one. A pipeline is not a transaction: each EVALSHA is its own atomic append, and
each caller gets its own reply (a conflict for one table is nobody else's).

The script is not preloaded (a constructor cannot await): the first EVALSHA of a fresh
server answers NOSCRIPT, the script is loaded, and the EVALSHAs that were refused are
sent again. A connection error fails every append of the pipeline with
``StoreUnavailable`` once the client's retries are spent; retrying is safe because the
script answers a command id it has seen with its first outcome.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final

import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff

from services.store.base import Appended, FeedEntry, Head, StoredEvent, check_append
from services.store.keys import KeySpace, check_command_id
from services.store.redis_store import (
    APPEND_SCRIPT,
    READ_CHUNK,
    append_args,
    appended,
    feed_entry,
    feed_start,
    meta_pattern,
    parse_head,
    store_error,
    table_of_meta,
    take_chunk,
)

MAX_PIPELINE: Final = 512  # appends per pipeline; more wait for the next one


def connect_async(
    url: str,
    *,
    retries: int = 6,
    socket_timeout: float = 5.0,
    max_connections: int | None = None,
) -> aioredis.Redis:
    """An asyncio client for the store, set up as ``connect`` sets up the sync one
    (bytes replies, RESP2 pinned, retries with backoff)."""
    retry = Retry(ExponentialWithJitterBackoff(cap=0.5, base=0.01), retries)
    client: aioredis.Redis = aioredis.Redis.from_url(
        url,
        protocol=2,
        decode_responses=False,
        retry=retry,
        retry_on_error=[redis.ConnectionError, redis.TimeoutError],
        socket_timeout=socket_timeout,
        socket_connect_timeout=min(socket_timeout, 2.0),
        health_check_interval=0,
        max_connections=max_connections,
    )
    return client


@contextmanager
def _redis_errors() -> Iterator[None]:
    try:
        yield
    except redis.RedisError as error:
        raise store_error(error) from error


_Pending = tuple[list[str], list[Any], "asyncio.Future[Any]"]


class AsyncRedisEventStore:
    """``AsyncEventStore`` on Redis. Use it from one event loop (the client's)."""

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        keys: KeySpace | None = None,
        script: str = APPEND_SCRIPT,
    ) -> None:
        self.client = client
        self.keys = keys or KeySpace()
        self._script = script
        self._sha: str = hashlib.sha1(script.encode()).hexdigest()  # what SCRIPT LOAD answers
        self._queue: list[_Pending] = []
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
        check_append(table_id, events, expected, command_id, outcome)
        args = append_args(table_id, events, expected, command_id, outcome)
        reply = await self.append_raw(self.keys.table(table_id).as_list(), args)
        return appended(reply, expected, outcome)

    def append_raw(self, keys: list[str], args: list[Any]) -> asyncio.Future[Any]:
        """The bare script call, pipelined with the others: no checks, no parsing."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._queue.append((keys, args, future))
        if len(self._queue) == 1:
            loop.call_soon(self._flush)  # after every task ready now has queued its append
        return future

    def _flush(self) -> None:
        while self._queue:
            batch, self._queue = self._queue[:MAX_PIPELINE], self._queue[MAX_PIPELINE:]
            task = asyncio.get_running_loop().create_task(self._send(batch))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send(self, batch: list[_Pending]) -> None:
        try:
            replies = await self._pipeline(batch)
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
            return
        for (_, _, future), reply in zip(batch, replies, strict=True):
            if future.done():  # its caller was cancelled
                continue
            if isinstance(reply, Exception):
                future.set_exception(_typed(reply))
            else:
                future.set_result(reply)

    async def _pipeline(self, batch: list[_Pending]) -> list[Any]:
        replies = await self._evalshas([(keys, args) for keys, args, _ in batch])
        unknown = [n for n, reply in enumerate(replies) if isinstance(reply, redis.exceptions.NoScriptError)]
        if unknown:
            self._sha = await self._load_script()
            again = await self._evalshas([batch[n][:2] for n in unknown])
            for n, reply in zip(unknown, again, strict=True):
                replies[n] = reply
        return replies

    async def _evalshas(self, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
        pipe = self.client.pipeline(transaction=False)
        sha = self._sha
        for keys, args in calls:
            pipe.evalsha(sha, len(keys), *keys, *args)
        replies: list[Any] = await pipe.execute(raise_on_error=False)
        return replies

    async def _load_script(self) -> str:
        sha = await self.client.script_load(self._script)
        return sha.decode() if isinstance(sha, bytes) else str(sha)

    async def read(
        self, table_id: str, after_version: int = 0, to_version: int | None = None
    ) -> list[StoredEvent]:
        key = self.keys.table(table_id).events
        upper = "+" if to_version is None else f"0-{to_version}"
        events: list[StoredEvent] = []
        start: int | None = after_version + 1
        with _redis_errors():
            while start is not None and (to_version is None or start <= to_version):
                entries: Any = await self.client.xrange(key, f"0-{start}", upper, count=READ_CHUNK)
                start = take_chunk(events, entries)
        return events

    async def table_ids(self) -> list[str]:
        found: set[str] = set()
        with _redis_errors():
            for partition in range(self.keys.partitions):
                prefix, pattern = meta_pattern(self.keys, partition)
                async for key in self.client.scan_iter(match=pattern, count=1000):
                    found.update(table_of_meta(self.keys, partition, prefix, key))
        return sorted(found)

    async def head(self, table_id: str) -> Head:
        key = self.keys.table(table_id).meta
        with _redis_errors():
            reply: Any = await self.client.hmget(key, ["v", "h"])
        return parse_head(reply)

    async def outcome_of(self, table_id: str, command_id: str) -> bytes | None:
        key = self.keys.table(table_id).commands
        with _redis_errors():
            found: Any = await self.client.hget(key, check_command_id(command_id))
        return None if found is None else bytes(found)

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
    if not isinstance(error, redis.RedisError):
        return error
    typed = store_error(error)
    typed.__cause__ = error
    return typed

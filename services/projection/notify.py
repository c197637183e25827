"""Change notifications, and how a reader resumes from a cursor.

When a document changes, the apply script publishes it, in the same atomic step that
stores it, on the sharded Pub/Sub channel named after its key (for a view:
``mighty:{p07}:view:<table>:<reader>``), so a notification holds one reader's view and
nothing else. Notifications are not stored; the stored view is, with its ``version``
(the table version it reflects). That version is the reader's cursor: ``follow``
subscribes first, then reads the stored view, so nothing published in between is lost,
and drops anything not newer than what it already gave. ``follow_async`` is the same on
an asyncio client (for a gateway's WebSocket per reader).
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Iterator
from typing import Any

import msgspec
import redis
import redis.asyncio as aioredis

from projections.views import view_name
from services.projection.keys import ProjectionKeys
from services.store.keys import KeySpace


class _Version(msgspec.Struct):
    version: int


_version = msgspec.json.Decoder(_Version).decode


def channel_of(space: KeySpace, table_id: str, reader: str) -> str:
    return ProjectionKeys(space, "views").doc(space.partition_of(table_id), view_name(table_id, reader))


def follow(
    client: redis.Redis, space: KeySpace, table_id: str, reader: str, cursor: int = 0, poll_s: float = 1.0
) -> Iterator[bytes]:
    """Yield ``reader``'s view of a table each time it changes, starting with the stored
    view if it is newer than ``cursor``. Runs until the caller stops iterating."""
    channel = channel_of(space, table_id, reader)
    raw: Any = client  # bytes replies; redis-py's annotations say otherwise
    pubsub = raw.pubsub()
    pubsub.ssubscribe(channel)
    try:
        _await_subscribed(pubsub, poll_s)  # only then is a change after the GET sure to reach us
        stored = raw.get(channel)
        if stored is not None and _version(stored).version > cursor:
            cursor = _version(stored).version
            yield bytes(stored)
        while True:
            message = pubsub.get_sharded_message(timeout=poll_s)
            if message is None or message.get("type") != "smessage":
                continue
            data = bytes(message["data"])
            version = _version(data).version
            if version > cursor:
                cursor = version
                yield data
    finally:
        pubsub.close()


async def follow_async(
    client: aioredis.Redis,
    space: KeySpace,
    table_id: str,
    reader: str,
    cursor: int = 0,
    poll_s: float = 1.0,
) -> AsyncGenerator[bytes, None]:
    """``follow`` on an asyncio client: the same order (SSUBSCRIBE, wait for the
    server's confirmation, GET the stored view, then the notifications), the same cursor
    rule. Runs until the caller stops iterating (``aclose`` or a cancelled task), then
    unsubscribes and gives the connection back."""
    channel = channel_of(space, table_id, reader)
    pubsub = client.pubsub()
    try:
        await pubsub.ssubscribe(channel)
        await _await_subscribed_async(pubsub, poll_s)
        stored: Any = await client.get(channel)
        if stored is not None and _version(stored).version > cursor:
            cursor = _version(stored).version
            yield bytes(stored)
        while True:
            message = await pubsub.get_message(timeout=poll_s)
            if message is None or message.get("type") != "smessage":
                continue
            data = bytes(message["data"])
            version = _version(data).version
            if version > cursor:
                cursor = version
                yield data
    finally:
        await pubsub.aclose()  # type: ignore[no-untyped-call]


async def _await_subscribed_async(pubsub: Any, poll_s: float, timeout_s: float = 10.0) -> None:
    """``_await_subscribed`` for asyncio: the confirmation, before the GET."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        message = await pubsub.get_message(timeout=poll_s)
        if message is not None and message.get("type") == "ssubscribe":
            return
    raise TimeoutError("the server did not confirm the subscription")


def _await_subscribed(pubsub: Any, poll_s: float, timeout_s: float = 10.0) -> None:
    """Wait for the server's confirmation of SSUBSCRIBE: redis-py sends the command
    without waiting, and a GET on another connection could otherwise run first, leaving
    a change published in between unseen until the next one."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        message = pubsub.get_sharded_message(timeout=poll_s)
        if message is not None and message.get("type") == "ssubscribe":
            return
    raise TimeoutError("the server did not confirm the subscription")

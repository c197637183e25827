"""Change notifications, and how a reader resumes from a cursor.

When a document changes, the apply script publishes it, in the same atomic step that
stores it, on the sharded Pub/Sub channel named after its key (for a view:
``mighty:{p07}:view:<table>:<reader>``), so a notification holds one reader's view and
nothing else. Notifications are not stored; the stored view is, with its ``version``
(the table version it reflects). That version is the reader's cursor: ``follow``
subscribes first, then reads the stored view, so nothing published in between is lost,
and drops anything not newer than what it already gave. ``follow_async`` is the same on
an asyncio client, with its subscription multiplexed on a ``FanoutHub`` (a gateway's one
Pub/Sub connection for all its WebSockets).
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Iterator
from typing import Any

import msgspec
import redis
import redis.asyncio as aioredis

from projections.views import view_name
from services.projection.fanout import FanoutHub
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
    hub: FanoutHub | None = None,
) -> AsyncGenerator[bytes, None]:
    """``follow`` on an asyncio client, through ``hub`` (services/projection/fanout.py:
    one Pub/Sub connection shared by every follower of the process; without one, a hub
    of its own for this one follower). The same order: SSUBSCRIBE and the server's
    confirmation, then GET the stored view on ``client``, then the notifications; the
    same cursor rule. When the hub says so (the follower fell behind, or the connection
    was lost and made again) the stored view is read again, and only what is newer than
    the cursor is given: nothing is missed, nothing repeated. A view read again that is
    *older* than the cursor is given too: the store went back (a rollback: Redis restarted
    on an AOF without its last second, a replica promoted without the last writes), and
    the reader must see the table as it is now to play on (docs/reliability.md,
    "Rollback"). Runs until the caller stops iterating (``aclose`` or a cancelled task),
    then leaves the channel."""
    channel = channel_of(space, table_id, reader)
    own = hub is None
    shared = FanoutHub.on(client) if hub is None else hub
    raw: Any = client  # bytes replies; redis-py's annotations say otherwise
    try:
        async with shared.following(channel) as inbox:
            data: bytes | None = await raw.get(channel)  # only now: the server confirmed
            reread = False
            while True:
                if data is not None:
                    version = _version(data).version
                    if version > cursor or (reread and version < cursor):
                        cursor = version
                        yield bytes(data)
                data = await inbox.get()
                reread = data is None
                if reread:  # re-read: what the hub could not hand over is stored
                    data = await raw.get(channel)
    finally:
        if own:
            await shared.aclose()


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

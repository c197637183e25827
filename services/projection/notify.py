"""Change notifications, and how a reader resumes from a cursor.

When a document changes, the apply script publishes it, in the same atomic step that
stores it, on the sharded Pub/Sub channel named after its key (for a view:
``mighty:{p07}:view:<table>:<reader>``), so a notification holds one reader's view and
nothing else. Notifications are not stored; the stored view is, with its ``version``
(the table version it reflects). That version is the reader's cursor: ``follow_async``
subscribes first, then reads the stored view, so nothing published in between is lost,
and drops anything not newer than what it already gave; its subscription is multiplexed
on a ``FanoutHub`` (a gateway's one Pub/Sub connection for all its WebSockets). Only the
gateway follows views, and it is asynchronous: there is no synchronous twin.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

import msgspec
import redis.asyncio as aioredis

from projections.docs import Decoder
from projections.views import view_name
from services.projection.fanout import FanoutHub
from services.projection.keys import ProjectionKeys
from services.store.keys import KeySpace


class _Version(msgspec.Struct):
    version: int


_version = Decoder(_Version).decode  # a view, in either encoding (projections/docs.py)


def channel_of(space: KeySpace, table_id: str, reader: str) -> str:
    return ProjectionKeys(space, "views").doc(space.partition_of(table_id), view_name(table_id, reader))


async def follow_async(
    client: aioredis.Redis,
    space: KeySpace,
    table_id: str,
    reader: str,
    cursor: int = 0,
    hub: FanoutHub | None = None,
    take: Callable[[bytes], bool] | None = None,
) -> AsyncGenerator[bytes, None]:
    """Yield ``reader``'s view of a table each time it changes, starting with the stored
    view if it is newer than ``cursor``, through ``hub`` (services/projection/fanout.py:
    one Pub/Sub connection shared by every follower of the process; without one, a hub
    of its own for this one follower). SSUBSCRIBE and the server's confirmation, then GET
    the stored view on ``client``, then the notifications. When the hub says so (the follower fell behind, or the connection
    was lost and made again) the stored view is read again, and only what is newer than
    the cursor is given: nothing is missed, nothing repeated. A view read again that is
    *older* than the cursor is given too: the store went back (a rollback: Redis restarted
    on an AOF without its last second, a replica promoted without the last writes), and
    the reader must see the table as it is now to play on (docs/reliability.md,
    "Rollback"). Runs until the caller stops iterating (``aclose`` or a cancelled task),
    then leaves the channel.

    ``take``: the caller's way to be given a newer view at once, in the hub's call, while
    the generator waits for the next message (``Inbox.take``): True, it was given (the
    cursor moves on); False, the generator yields it as any other."""
    channel = channel_of(space, table_id, reader)
    own = hub is None
    shared = FanoutHub.on(client) if hub is None else hub
    raw: Any = client  # bytes replies; redis-py's annotations say otherwise
    try:
        async with shared.following(channel) as inbox:
            if take is not None:

                def at_once(message: bytes) -> bool:
                    nonlocal cursor
                    if not message:  # "read it again": the loop reads
                        return False
                    version = _version(message).version
                    if version <= cursor:
                        return True  # nothing newer: dropped, as the loop drops it
                    if not take(message):
                        return False
                    cursor = version
                    return True

                inbox.take = at_once
            data: bytes | None = await raw.get(channel)  # only now: the server confirmed
            reread = False
            while True:
                if data is not None:
                    version = _version(data).version
                    if version > cursor or (reread and version < cursor):
                        cursor = version
                        yield bytes(data)
                data = await inbox.get()
                # re-read: what the hub could not hand over is stored; an empty message
                # is a rebuild's "read it again" (services/projection/rebuild.py)
                reread = not data
                if reread:
                    data = await raw.get(channel)
    finally:
        if own:
            await shared.aclose()

"""The fan-out hub (services/projection/fanout.py) against a real redis-server: one
Pub/Sub connection for many followers, subscriptions counted per channel, a slow
follower that re-reads instead of holding the others up, and a reconnect after which
every follower re-reads the stored view."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest

from services.projection.fanout import FanoutHub, Inbox
from services.projection.notify import channel_of, follow_async
from services.store import KeySpace, connect_async
from services.store.replies import HiredisReplies

# The hub's mechanics on one redis-server (its one connection, killed, stalled, ACL-refused);
# on a cluster the hub keeps one such link per node, followed by the gateway's tests there.
pytestmark = [pytest.mark.integration, pytest.mark.single_node("the hub's link to one server: killed, stalled and refused by its ACL")]
SPACE = KeySpace(16)


def _doc(version: int) -> bytes:
    return msgspec.json.encode({"version": version})


def _shard_subscribers(redis_client: Any, channel: str) -> int:
    """What the server says: how many connections are subscribed to ``channel``."""
    reply = redis_client.execute_command("PUBSUB", "SHARDNUMSUB", channel)
    return int(reply[1])


async def _until(check: Callable[[], bool], what: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def _version(stream: Any) -> int:
    return int(msgspec.json.decode(await asyncio.wait_for(anext(stream), 5))["version"])


async def _next(inbox: Inbox, timeout_s: float = 5.0) -> bytes | None:
    return await asyncio.wait_for(inbox.get(), timeout_s)


def _run(scenario: Callable[[Any], Awaitable[Any]], url: str) -> Any:
    async def main() -> Any:
        client = connect_async(url)
        try:
            return await scenario(client)
        finally:
            await client.aclose()

    return asyncio.run(main())


def test_many_followers_share_one_connection_and_each_gets_its_channels_messages_once(
    redis_server: Any, redis_client: Any
) -> None:
    async def scenario(client: Any) -> None:
        hub = FanoutHub.on(client)
        try:
            a = [await hub.subscribe("ch:a") for _ in range(3)]
            b = await hub.subscribe("ch:b")
            # subscribed means confirmed: the server has the subscription now
            assert _shard_subscribers(redis_client, "ch:a") == 1, "three followers, one subscription"
            assert _shard_subscribers(redis_client, "ch:b") == 1
            assert len(redis_client.client_list(_type="pubsub")) == 1, "one Pub/Sub connection"
            # its messages read straight from hiredis (services/store/replies.py): if a redis-py
            # upgrade moves what that reads, the hub still works, and this says it got slower
            assert [HiredisReplies.of(link._conn) is not None for link in hub.links] == [True]
            await client.execute_command("SPUBLISH", "ch:a", b"one")
            await client.execute_command("SPUBLISH", "ch:b", b"two")
            assert [await _next(inbox) for inbox in a] == [b"one"] * 3
            assert await _next(b) == b"two"
            await asyncio.sleep(0.05)
            assert [len(inbox) for inbox in (*a, b)] == [0, 0, 0, 0], "nothing given twice"
        finally:
            await hub.aclose()

    _run(scenario, redis_server.url)


def test_a_channel_is_unsubscribed_when_its_last_follower_leaves_and_can_be_followed_again(
    redis_server: Any, redis_client: Any
) -> None:
    async def scenario(client: Any) -> None:
        hub = FanoutHub.on(client)
        try:
            first, second = await hub.subscribe("ch:r"), await hub.subscribe("ch:r")
            hub.unsubscribe("ch:r", first)
            await asyncio.sleep(0.05)
            assert _shard_subscribers(redis_client, "ch:r") == 1, "one follower is left"
            await client.execute_command("SPUBLISH", "ch:r", b"kept")
            assert await _next(second) == b"kept"
            assert len(first) == 0, "a follower that left gets nothing"
            hub.unsubscribe("ch:r", second)
            await _until(lambda: _shard_subscribers(redis_client, "ch:r") == 0, "SUNSUBSCRIBE")
            # leave and come back before the server has answered: the new follower waits
            # for its own SSUBSCRIBE's confirmation, not the old one's
            third = await hub.subscribe("ch:r")
            hub.unsubscribe("ch:r", third)
            fourth = await hub.subscribe("ch:r")
            assert _shard_subscribers(redis_client, "ch:r") == 1
            await client.execute_command("SPUBLISH", "ch:r", b"again")
            assert await _next(fourth) == b"again"
            assert len(third) == 0
        finally:
            await hub.aclose()

    _run(scenario, redis_server.url)


def test_a_follower_that_does_not_read_is_told_to_re_read_while_the_others_get_every_message(
    redis_server: Any,
) -> None:
    async def scenario(client: Any) -> tuple[list[bytes | None], list[bytes | None]]:
        hub = FanoutHub.on(client, inbox_limit=4)
        try:
            slow, quick = await hub.subscribe("ch:s"), await hub.subscribe("ch:s")
            got: list[bytes | None] = []
            for n in range(10):
                await client.execute_command("SPUBLISH", "ch:s", b"%d" % n)
                got.append(await _next(quick))
            await client.execute_command("SPUBLISH", "ch:s", b"last")
            got.append(await _next(quick))
            # the slow one overflowed: it is told to re-read, then gets what came after
            late = [await _next(slow)]
            while len(slow):
                late.append(await _next(slow))
            return got, late
        finally:
            await hub.aclose()

    got, late = _run(scenario, redis_server.url)
    assert got == [b"%d" % n for n in range(10)] + [b"last"]
    assert late[0] is None, "re-read the stored view"
    assert late[1:] == got[-len(late) + 1:], "then the messages after the overflow, in order"
    assert len(late) - 1 < 4


def test_a_slow_follower_of_a_view_skips_to_the_newest_and_gives_each_version_once(
    redis_server: Any, redis_client: Any
) -> None:
    channel = channel_of(SPACE, "t000", "1")

    async def scenario(client: Any) -> list[int]:
        hub = FanoutHub.on(client, inbox_limit=2)
        try:
            redis_client.set(channel, _doc(1))
            stream = follow_async(client, SPACE, "t000", "1", cursor=0, hub=hub)
            seen = [msgspec.json.decode(await anext(stream))["version"]]
            for version in range(2, 30):  # stored and published as the views worker does
                redis_client.set(channel, _doc(version))
                redis_client.execute_command("SPUBLISH", channel, _doc(version))
            await asyncio.sleep(0.2)  # the follower read nothing meanwhile: it overflowed
            while seen[-1] < 29:
                seen.append(msgspec.json.decode(await asyncio.wait_for(anext(stream), 5))["version"])
            await stream.aclose()
            return seen
        finally:
            await hub.aclose()

    seen = _run(scenario, redis_server.url)
    assert seen[0] == 1 and seen[-1] == 29
    assert seen == sorted(set(seen)), "each version once, in order"
    assert len(seen) < 29, "it skipped to the newest rather than replaying every message"


def test_a_follower_that_takes_views_at_once_is_given_each_newer_one_once_and_in_order(
    redis_server: Any, redis_client: Any
) -> None:
    """``take`` (the gateway's push at once): a newer view published while the follower
    waits goes to it in the hub's own call; one it does not take (False, or an error)
    comes through the iterator; one not newer than the cursor goes to neither."""
    channel = channel_of(SPACE, "t009", "1")

    async def scenario(client: Any) -> tuple[list[int], list[int]]:
        hub = FanoutHub.on(client)
        taken: list[int] = []
        given: list[int] = []

        def take(message: bytes) -> bool:
            version = int(msgspec.json.decode(message)["version"])
            if version == 6:
                raise RuntimeError("the way at once failed")
            if version % 2:
                return False
            taken.append(version)
            given.append(version)
            return True

        async def follow(stream: Any) -> None:
            async for data in stream:
                given.append(int(msgspec.json.decode(data)["version"]))

        try:
            redis_client.set(channel, _doc(1))
            follower = asyncio.create_task(follow(follow_async(client, SPACE, "t009", "1", cursor=0, hub=hub,
                                                               take=take)))
            await _until(lambda: given == [1], "the stored view")
            for version in (2, 3, 2, 4, 5, 6, 7, 8):
                redis_client.execute_command("SPUBLISH", channel, _doc(version))
                await asyncio.sleep(0.05)  # the follower is waiting again
            await _until(lambda: given[-1] == 8, "the last view")
            follower.cancel()
            return taken, given
        finally:
            await hub.aclose()

    taken, given = _run(scenario, redis_server.url)
    assert given == [1, 2, 3, 4, 5, 6, 7, 8]
    assert taken == [2, 4, 8]


def test_an_empty_message_makes_a_follower_read_the_stored_view_again(
    redis_server: Any, redis_client: Any
) -> None:
    """A rebuild's "read it again" (services/projection/rebuild.py): a view that went
    back with the rebuild is given, one that is the same is not."""
    channel = channel_of(SPACE, "t001", "2")

    async def scenario(client: Any) -> list[int]:
        hub = FanoutHub.on(client)
        try:
            redis_client.set(channel, _doc(7))
            stream = follow_async(client, SPACE, "t001", "2", cursor=0, hub=hub)
            seen = [await _version(stream)]
            for stored, said in ((7, b""), (4, b""), (5, _doc(5))):  # the same view, one gone back, a newer
                redis_client.set(channel, _doc(stored))
                redis_client.execute_command("SPUBLISH", channel, said)
                if stored != 7:
                    seen.append(await _version(stream))
            await stream.aclose()
            return seen
        finally:
            await hub.aclose()

    assert _run(scenario, redis_server.url) == [7, 4, 5]


def test_after_the_connection_is_killed_every_follower_re_reads_and_follows_on(
    redis_server: Any, redis_client: Any
) -> None:
    channels = [channel_of(SPACE, "k000", seat) for seat in ("0", "1")]

    async def scenario(client: Any) -> tuple[list[list[int]], int]:
        hub = FanoutHub.on(client)
        try:
            for channel in channels:
                redis_client.set(channel, _doc(5))
            streams = [follow_async(client, SPACE, "k000", seat, cursor=0, hub=hub) for seat in ("0", "1")]
            seen = [[msgspec.json.decode(await anext(s))["version"]] for s in streams]
            redis_client.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
            for channel in channels:  # changed while the hub was away: stored, its message lost
                redis_client.set(channel, _doc(6))
                redis_client.execute_command("SPUBLISH", channel, _doc(6))
            for n, stream in enumerate(streams):
                seen[n].append(msgspec.json.decode(await asyncio.wait_for(anext(stream), 10))["version"])
            await _until(lambda: all(_shard_subscribers(redis_client, c) == 1 for c in channels), "resubscribed")
            for channel in channels:
                redis_client.set(channel, _doc(7))
                redis_client.execute_command("SPUBLISH", channel, _doc(7))
            for n, stream in enumerate(streams):
                seen[n].append(msgspec.json.decode(await asyncio.wait_for(anext(stream), 10))["version"])
                await stream.aclose()
            return seen, hub.links[0].connects
        finally:
            await hub.aclose()

    seen, connects = _run(scenario, redis_server.url)
    assert seen == [[5, 6, 7], [5, 6, 7]]
    assert connects == 2


def test_the_hub_rides_out_a_server_restart(redis_server: Any, redis_client: Any) -> None:
    channel = channel_of(SPACE, "q000", "spectator")

    async def scenario(client: Any) -> list[int]:
        hub = FanoutHub.on(client)
        try:
            redis_client.set(channel, _doc(1))
            stream = follow_async(client, SPACE, "q000", "spectator", cursor=0, hub=hub)
            seen = [msgspec.json.decode(await anext(stream))["version"]]
            await asyncio.to_thread(redis_server.restart)  # the AOF keeps version 1
            redis_client.set(channel, _doc(2))  # stored while no one was subscribed
            seen.append(msgspec.json.decode(await asyncio.wait_for(anext(stream), 20))["version"])
            await stream.aclose()
            return seen
        finally:
            await hub.aclose()

    assert _run(scenario, redis_server.url) == [1, 2]


def test_a_connection_that_stops_answering_is_dropped_and_made_again(
    redis_server: Any, redis_client: Any
) -> None:
    async def scenario(client: Any) -> tuple[int, bytes | None, bytes | None]:
        hub = FanoutHub.on(client, keepalive_s=0.2)
        try:
            inbox = await hub.subscribe("ch:p")
            redis_client.execute_command("CLIENT", "PAUSE", 1500, "ALL")  # nothing is answered
            await asyncio.sleep(2.0)
            resync = await _next(inbox, 10)  # reconnected: re-read
            await _until(lambda: _shard_subscribers(redis_client, "ch:p") == 1, "resubscribed")
            await client.execute_command("SPUBLISH", "ch:p", b"after")
            return hub.links[0].connects, resync, await _next(inbox)
        finally:
            await hub.aclose()

    connects, resync, after = _run(scenario, redis_server.url)
    assert connects >= 2
    assert resync is None
    assert after == b"after"


def test_a_follower_waits_for_the_hub_to_reconnect_before_it_reads_the_stored_view(
    redis_server: Any, redis_client: Any
) -> None:
    """Subscribing while the connection is down returns only once it is back and the
    subscription confirmed: the GET after it cannot miss a change."""
    async def scenario(client: Any) -> tuple[int, int]:
        hub = FanoutHub.on(client)
        try:
            await hub.subscribe("ch:w")
            redis_client.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
            await asyncio.sleep(0)
            await hub.subscribe("ch:x")
            return _shard_subscribers(redis_client, "ch:x"), _shard_subscribers(redis_client, "ch:w")
        finally:
            await hub.aclose()

    assert _run(scenario, redis_server.url) == (1, 1)


def test_a_refused_subscription_fails_its_followers_only_and_the_link_goes_on(
    redis_server: Any, redis_client: Any
) -> None:
    """A server that refuses one SSUBSCRIBE (here an ACL without that channel) answers it
    with an error: that follower gets the error, the replies after it still match their
    commands, and the other channels keep their messages."""
    redis_client.execute_command("ACL", "SETUSER", "limited", "on", ">secret", "~*", "&ch:ok*", "+@all")
    url = redis_server.url.replace("redis://", "redis://limited:secret@", 1)

    async def scenario(client: Any) -> tuple[BaseException | None, bytes | None, bytes | None]:
        hub = FanoutHub.on(client)
        try:
            fine = await hub.subscribe("ch:ok:1")
            refused: BaseException | None = None
            try:
                await hub.subscribe("ch:no")
            except Exception as error:
                refused = error
            later = await hub.subscribe("ch:ok:2")  # confirmed by its own reply, not the error's
            await client.execute_command("SPUBLISH", "ch:ok:2", b"two")
            await client.execute_command("SPUBLISH", "ch:ok:1", b"one")
            return refused, await _next(later), await _next(fine)
        finally:
            await hub.aclose()

    refused, later, fine = _run(scenario, url)
    assert refused is not None and "permissions" in str(refused)
    assert later == b"two"
    assert fine == b"one"

"""One sharded Pub/Sub connection per process, fanned out to every follower in it.

A gateway holds one WebSocket per reader and each follows one channel (a view's key,
``notify.channel_of``). A Pub/Sub connection per follower runs a gateway out of
connections at a few dozen sockets; a ``FanoutHub`` holds ONE connection (a ``Link``)
for the whole process and multiplexes every follower's channel on it:

- ``subscribe(channel)`` counts followers per channel: the first sends ``SSUBSCRIBE``,
  every follower (the first and those after it) returns once the server has confirmed
  that subscription, so a read of the stored view made after it cannot miss a change
  published in between; ``unsubscribe`` sends ``SUNSUBSCRIBE`` when the last one leaves.
- Each published message goes, as the same ``bytes``, to the ``Inbox`` of every follower
  of its channel. An inbox is bounded: a follower that falls ``limit`` messages behind
  is not waited for, its inbox is emptied and told to re-read the stored view (the
  protocol is a cursor over versions, so skipping to the newest is correct), and the
  others go on.
- When Redis drops the connection, the link reconnects (backing off), subscribes every
  channel that still has followers again, and once each is confirmed tells its
  followers to re-read the stored view: what was published while it was down is in it.
  A connection that stops answering (no reply to a PING within ``keepalive_s``) is
  dropped and reconnected the same way.

Commands and replies on a link are matched in order (a FIFO of what was sent: Redis
answers each SSUBSCRIBE, SUNSUBSCRIBE and PING in turn), so each follower waits for the
confirmation of the very SSUBSCRIBE that made its channel subscribed, even when the
channel was unsubscribed and subscribed again while replies were in flight.

**Redis Cluster.** A hub routes each channel to a link with ``shard_of(channel)`` and
builds each link's connection with ``connect(shard)``. On one Redis both are constant
(``FanoutHub.on(client)``: one link). For a cluster, ``shard_of`` is the node serving
the channel's hash slot (``key_slot``) and ``connect`` a connection to that node: one
link, one connection per node. A channel the server unsubscribes by itself (what a
cluster does when the slot moves) is handed back to the hub, which routes it again and
has its followers re-read. Nothing else in the hub knows about topology.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from typing import Any, Final

import redis
import redis.asyncio as aioredis
import redis.asyncio.cluster as aiocluster
import structlog

from services.store.replies import HiredisReplies

log = structlog.get_logger("mighty.fanout")

# What a lost or unusable connection raises through redis-py (and the OS).
_LOST = (redis.ConnectionError, redis.TimeoutError, OSError, EOFError)

DEFAULT_INBOX: Final = 64  # messages a follower may fall behind before it re-reads instead
DEFAULT_KEEPALIVE_S: Final = 15.0
DEFAULT_CONFIRM_S: Final = 10.0
_REROUTE_TRIES: Final = 20  # slot maps asked for after a channel's node unsubscribed it (≈ 15 s)


class Inbox:
    """One follower's queue of published messages, bounded at ``limit``. ``get``
    answers the next message, or ``None``: re-read the stored view (after an overflow,
    a reconnect or a resubscription), then go on with the messages after it."""

    __slots__ = ("_items", "_limit", "_resync", "_waiter", "overflows", "take")

    def __init__(self, limit: int = DEFAULT_INBOX) -> None:
        self._items: deque[bytes] = deque()
        self._limit = limit
        self._resync = False
        self._waiter: asyncio.Future[None] | None = None
        self.overflows = 0
        # The follower's way to take a message at once, in the hub's own call: set by a
        # follower that can, called only while it waits in ``get`` with nothing queued
        # (so nothing is overtaken). True: taken; False (or an error): queued as any
        # other, for the follower's ``get``. A push then costs no wake-up of its task.
        self.take: Callable[[bytes], bool] | None = None

    def put(self, data: bytes) -> None:
        take, waiter = self.take, self._waiter
        if take is not None and waiter is not None and not waiter.done() and not self._items and not self._resync:
            try:
                if take(data):
                    return
            except Exception as error:  # noqa: BLE001 - the follower's own path meets it again, and handles it
                log.debug("fanout_take_failed", error=str(error)[:200])
        if len(self._items) >= self._limit:
            # too far behind: what is dropped was published before now, so a read of
            # the stored view made after now holds it
            self._items.clear()
            self._resync = True
            self.overflows += 1
        else:
            self._items.append(data)
        self._wake()

    def resync(self) -> None:
        """Drop what is queued and have the follower re-read the stored view next."""
        self._items.clear()
        self._resync = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def __len__(self) -> int:
        return len(self._items)

    async def get(self) -> bytes | None:
        while True:
            if self._resync:
                self._resync = False
                return None
            if self._items:
                return self._items.popleft()
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None


class _Channel:
    """A channel's followers on a link, and what the link last asked of the server for it."""

    __slots__ = ("adopted", "followers", "in_flight", "ready", "wanted")

    def __init__(self, ready: asyncio.Future[None]) -> None:
        self.followers: set[Inbox] = set()
        self.wanted = False  # the last command sent (or to send on connect) was SSUBSCRIBE
        self.ready = ready  # resolved by the confirmation of the last SSUBSCRIBE
        self.in_flight = 0  # commands sent for this channel and not answered yet
        self.adopted = False  # taken over from another link: its followers re-read once subscribed


# What a link waits a reply for, in the order sent: ("sub", channel, its future, re-read
# after?), ("unsub", channel, None, False), ("ping", b"", None, False).
_Sent = tuple[str, bytes, "asyncio.Future[None] | None", bool]


class Link:
    """One Pub/Sub connection and the channels subscribed on it. Made by a ``FanoutHub``;
    its tasks start on the first subscription and stop at ``aclose``."""

    def __init__(self, hub: FanoutHub, connection: Any, shard: Hashable = None) -> None:
        self._hub = hub
        self._conn = connection
        self.shard = shard
        self._channels: dict[bytes, _Channel] = {}
        self._sent: deque[_Sent] = deque()
        self._outbox: list[bytes] = []
        self._outbox_ready: asyncio.Event = asyncio.Event()
        self._io = asyncio.Lock()  # a write, or dropping and making the connection
        self._connected = False
        self._closed = False
        self._pinged = False
        self._heard = False  # a reply or message since the last keepalive tick
        self._tasks: list[asyncio.Task[None]] = []
        self.connects = 0  # connections made: 1, then one more per reconnect

    # ---------------------------------------------------------------- followers

    async def subscribe(self, channel: bytes, inbox: Inbox, timeout_s: float) -> None:
        self._start()
        loop = asyncio.get_running_loop()
        state = self._channels.get(channel)
        if state is None:
            state = self._channels[channel] = _Channel(loop.create_future())
        state.followers.add(inbox)  # messages from now on reach it (older ones: the GET)
        if not state.wanted:
            state.wanted = True
            if state.ready.done():
                state.ready = loop.create_future()
            if self._connected:
                self._send_sub(channel, state, resync=False)
            # else the link subscribes it on connecting
        try:
            # shielded: the future is the channel's, other followers may wait on it too.
            # asyncio.timeout, not wait_for: Python 3.11's wait_for returns the result of a
            # future that completes as the caller is cancelled, and so loses the
            # cancellation (a gateway's pusher then followed a closed socket's channel for ever)
            async with asyncio.timeout(timeout_s):
                await asyncio.shield(state.ready)
        except BaseException:
            self.unsubscribe(channel, inbox)
            raise

    def unsubscribe(self, channel: bytes, inbox: Inbox) -> None:
        state = self._channels.get(channel)
        if state is None or inbox not in state.followers:
            return
        state.followers.discard(inbox)
        if state.followers:
            return
        if state.wanted:
            state.wanted = False
            if self._connected:  # else nothing was sent, or the connection that had it is gone
                self._queue(("unsub", channel, None, False), b"SUNSUBSCRIBE", channel)
                state.in_flight += 1
        self._forget_if_idle(channel, state)

    def followers(self, channel: bytes) -> int:
        state = self._channels.get(channel)
        return 0 if state is None else len(state.followers)

    @property
    def channels(self) -> int:
        """Channels with at least one follower."""
        return sum(1 for state in self._channels.values() if state.followers)

    # ---------------------------------------------------------------- sending

    def _send_sub(self, channel: bytes, state: _Channel, resync: bool) -> None:
        self._queue(("sub", channel, state.ready, resync), b"SSUBSCRIBE", channel)
        state.in_flight += 1

    def _queue(self, sent: _Sent, *command: bytes) -> None:
        # the FIFO and the bytes to write grow in the same step: replies match in order
        self._sent.append(sent)
        self._outbox.extend(self._conn.pack_command(*command))
        self._outbox_ready.set()

    async def _write(self) -> None:
        while not self._closed:
            await self._outbox_ready.wait()
            self._outbox_ready.clear()
            async with self._io:  # never while the reader drops or makes the connection
                if not self._outbox or not self._connected:
                    continue
                chunks, self._outbox = self._outbox, []
                try:
                    await self._conn.send_packed_command(chunks, check_health=False)
                except Exception as error:  # the connection is no good: the reader makes another
                    log.warning("fanout_write_failed", error=str(error))
                    await self._dropped()

    # ---------------------------------------------------------------- reading

    def _start(self) -> None:
        if self._tasks or self._closed:
            return
        self._tasks = [asyncio.create_task(self._read(), name="fanout-read"),
                       asyncio.create_task(self._write(), name="fanout-write"),
                       asyncio.create_task(self._keepalive(), name="fanout-keepalive")]

    async def _read(self) -> None:
        backoff = 0.05
        while not self._closed:
            try:
                await self._connect()
                backoff = 0.05
                # each message read straight from hiredis (services/store/replies.py): a
                # view published is one message for each of its followers' channels
                replies = HiredisReplies.of(self._conn)
                while True:
                    if replies is None:
                        try:
                            reply = await self._conn.read_response(timeout=math.inf, disconnect_on_error=False)
                        except redis.ResponseError as refused:
                            reply = refused
                    else:
                        if not self._connected:  # dropped by the writer or the keepalive
                            raise redis.ConnectionError("The Pub/Sub connection was dropped.")
                        reply = replies.gets()
                        while reply is replies.not_enough_data:
                            await replies.read_more()
                            reply = replies.gets()
                        if isinstance(reply, redis.ConnectionError):
                            raise reply
                    self._heard = True
                    if isinstance(reply, redis.ResponseError):  # an error reply to the oldest command
                        self._refused(reply)
                    else:
                        self._on_reply(reply)
            except _LOST as error:
                if self._closed:
                    return
                log.warning("fanout_connection_lost", error=str(error), channels=self.channels)
                await self._drop()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                await self._hub._relocate(self)

    async def _connect(self) -> None:
        async with self._io:
            await self._connected_again()

    async def _connected_again(self) -> None:
        await self._conn.connect()
        self.connects += 1
        # Every channel with followers is subscribed again; once confirmed, they re-read
        # (what was published while the connection was down is in the stored views).
        self._connected = True
        for channel, state in self._channels.items():
            if state.followers and state.wanted:
                self._send_sub(channel, state, resync=self.connects > 1 or state.adopted)
                state.adopted = False
        self._outbox_ready.set()

    async def _drop(self) -> None:
        async with self._io:
            await self._dropped()

    async def _dropped(self) -> None:
        """The connection is gone: forget what was in flight, keep what followers want.
        Only the reader connects again (``_io`` held: no write goes out meanwhile, and
        redis-py's own reconnect on a write never happens behind the reader's back)."""
        if self._connected:
            self._connected = False
            self._sent.clear()
            self._outbox = []
            self._pinged = False
            for channel, state in list(self._channels.items()):
                state.in_flight = 0
                if not state.followers:
                    del self._channels[channel]
                elif state.ready.done():
                    state.ready = asyncio.get_running_loop().create_future()  # for followers to come
        with contextlib.suppress(Exception):
            await self._conn.disconnect(nowait=True)

    def _on_reply(self, reply: Any) -> None:
        if not isinstance(reply, list):  # PONG: a PING while nothing is subscribed
            if reply in (b"PONG", "PONG"):
                self._answered("ping", b"")
                self._pinged = False
            return
        kind = reply[0]
        if kind == b"smessage":
            state = self._channels.get(reply[1])
            if state is not None:
                data = reply[2]
                for inbox in state.followers:
                    inbox.put(data)
            return
        if kind == b"ssubscribe":
            sent = self._answered("sub", reply[1])
            if sent is None:
                return
            _, channel, ready, resync = sent
            if ready is not None and not ready.done():
                ready.set_result(None)
            state = self._channels.get(channel)
            if resync and state is not None:
                for inbox in state.followers:
                    inbox.resync()
            return
        if kind == b"sunsubscribe":
            if self._sent and self._sent[0][0] == "unsub" and self._sent[0][1] == reply[1]:
                self._answered("unsub", reply[1])
                return
            self._lost_channel(reply[1])  # the server's own doing (a cluster's slot moved)
            return
        if kind == b"pong":
            self._answered("ping", b"")
            self._pinged = False
            return
        log.warning("fanout_unexpected_reply", kind=str(kind)[:40])

    def _answered(self, kind: str, channel: bytes) -> _Sent | None:
        if not self._sent or self._sent[0][0] != kind or self._sent[0][1] != channel:
            log.warning("fanout_reply_out_of_order", kind=kind, channel=channel.decode(errors="replace"))
            return None
        sent = self._sent.popleft()
        state = self._channels.get(channel)
        if state is not None:
            state.in_flight -= 1
            self._forget_if_idle(channel, state)
        return sent

    def _refused(self, error: redis.ResponseError) -> None:
        if not self._sent:
            log.warning("fanout_error_reply", error=str(error))
            return
        kind, channel, ready, _ = self._sent.popleft()
        log.warning("fanout_command_refused", command=kind, channel=channel.decode(errors="replace"),
                    error=str(error))
        state = self._channels.get(channel)
        if state is not None:
            state.in_flight -= 1
            if kind == "sub":
                state.wanted = False
            self._forget_if_idle(channel, state)
        if ready is not None and not ready.done():
            ready.set_exception(error)

    def _lost_channel(self, channel: bytes) -> None:
        state = self._channels.get(channel)
        if state is None or not state.followers:
            return
        followers = list(state.followers)
        del self._channels[channel]
        self._hub._reroute_later(channel, followers, self.shard)

    def _forget_if_idle(self, channel: bytes, state: _Channel) -> None:
        if not state.followers and state.in_flight == 0 and not state.wanted:
            self._channels.pop(channel, None)

    def adopt(self, channel: bytes, followers: list[Inbox], ready: asyncio.Future[None] | None = None) -> None:
        """Take over followers of a channel another link (or this one) lost: subscribe
        it here, and have them re-read once it is confirmed. ``ready``: the confirmation
        the followers were waiting for on the other link, resolved by this one's."""
        self._start()
        state = self._channels.get(channel)
        if state is None:
            if ready is None or ready.done():
                ready = asyncio.get_running_loop().create_future()
            state = self._channels[channel] = _Channel(ready)
        elif state.ready.done():
            state.ready = asyncio.get_running_loop().create_future()
        if ready is not None and ready is not state.ready and not ready.done():
            state.ready.add_done_callback(lambda done: _settle_like(ready, done))
        state.followers.update(followers)
        state.wanted = True
        if self._connected:
            self._send_sub(channel, state, resync=True)
        else:  # subscribed on connecting: its followers re-read then all the same
            state.adopted = True

    def give_up(self, keep: Callable[[bytes], bool]) -> dict[bytes, tuple[list[Inbox], asyncio.Future[None]]]:
        """Hand over every channel ``keep`` says no longer belongs here (a cluster's
        failover moved its slot to another node): its followers, and the confirmation
        some of them may still wait for, which the link taking them over resolves. Called
        while this link is not connected (nothing to unsubscribe)."""
        moved: dict[bytes, tuple[list[Inbox], asyncio.Future[None]]] = {}
        for channel, state in list(self._channels.items()):
            if state.followers and not keep(channel):
                moved[channel] = (list(state.followers), state.ready)
                del self._channels[channel]
        return moved

    # ---------------------------------------------------------------- keepalive

    async def _keepalive(self) -> None:
        interval = self._hub.keepalive_s
        while not self._closed:
            await asyncio.sleep(interval)
            if not self._connected:
                continue
            if self._heard:
                self._heard = False
                continue
            if self._pinged:  # nothing heard for a whole interval since the PING
                log.warning("fanout_connection_silent", seconds=interval)
                await self._drop()  # the reader's read fails and it reconnects
                continue
            self._pinged = True
            self._queue(("ping", b"", None, False), b"PING")

    async def aclose(self) -> None:
        self._closed = True
        self._outbox_ready.set()  # the loops look at _closed: a cancel can be lost in wait_for
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)
        self._tasks = []
        for state in self._channels.values():
            if not state.ready.done():
                state.ready.cancel()
        self._channels.clear()
        self._connected = False
        with contextlib.suppress(Exception):
            await self._conn.disconnect(nowait=True)


class FanoutHub:
    """Followers of sharded Pub/Sub channels, over one ``Link`` per shard (one Redis:
    one link). Use it from one event loop."""

    def __init__(
        self,
        connect: Callable[[Hashable], Any],
        shard_of: Callable[[bytes], Hashable] = lambda channel: None,
        *,
        inbox_limit: int = DEFAULT_INBOX,
        keepalive_s: float = DEFAULT_KEEPALIVE_S,
        confirm_timeout_s: float = DEFAULT_CONFIRM_S,
        prepare: Callable[[], Awaitable[None]] | None = None,
        refresh: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._connect = connect
        self._shard_of = shard_of
        self._prepare = prepare  # awaited before a channel is routed (a cluster's slot map)
        self._refresh = refresh  # asks for the slot map again (a cluster's failover moved slots)
        self._pending: set[asyncio.Task[None]] = set()
        self._links: dict[Hashable, Link] = {}
        self._routes: dict[bytes, Link] = {}  # channel -> the link its followers are on
        self.inbox_limit = inbox_limit
        self.keepalive_s = keepalive_s
        self.confirm_timeout_s = confirm_timeout_s

    @classmethod
    def on(cls, client: aioredis.Redis | aiocluster.RedisCluster, **options: Any) -> FanoutHub:
        """A hub on the Redis of an asyncio client: one connection of the client's
        settings (address, auth, parser), made apart from its pool so the pool's
        connections stay for commands. On a cluster client, one connection per node,
        each channel on the node that serves its hash slot (the client's slot map)."""
        if isinstance(client, aiocluster.RedisCluster):
            cluster = client
            return cls(lambda shard: _node_connection(cluster, shard),
                       lambda channel: _node_of(cluster, channel), prepare=_slot_map(cluster),
                       refresh=_slot_map_again(cluster), **options)
        pool: Any = client.connection_pool
        return cls(lambda shard: pool.make_connection(), **options)

    def link(self, shard: Hashable = None) -> Link:
        found = self._links.get(shard)
        if found is None:
            found = self._links[shard] = Link(self, self._connect(shard), shard)
        return found

    @property
    def links(self) -> list[Link]:
        return list(self._links.values())

    async def subscribe(self, channel: str | bytes) -> Inbox:
        """A new follower of ``channel``: returns once the server has confirmed the
        channel's subscription (``TimeoutError`` after ``confirm_timeout_s``)."""
        key = channel.encode() if isinstance(channel, str) else channel
        if self._prepare is not None and key not in self._routes:
            await self._prepare()
        inbox = Inbox(self.inbox_limit)
        link = self._routes.get(key) or self.link(self._shard_of(key))
        self._routes[key] = link
        try:
            await link.subscribe(key, inbox, self.confirm_timeout_s)
        except BaseException:
            if link.followers(key) == 0:
                self._routes.pop(key, None)
            raise
        return inbox

    def unsubscribe(self, channel: str | bytes, inbox: Inbox) -> None:
        key = channel.encode() if isinstance(channel, str) else channel
        link = self._routes.get(key)
        if link is None:
            return
        link.unsubscribe(key, inbox)
        if link.followers(key) == 0:
            self._routes.pop(key, None)

    @contextlib.asynccontextmanager
    async def following(self, channel: str | bytes) -> AsyncIterator[Inbox]:
        inbox = await self.subscribe(channel)
        try:
            yield inbox
        finally:
            self.unsubscribe(channel, inbox)

    def _reroute(self, channel: bytes, followers: list[Inbox], ready: asyncio.Future[None] | None = None) -> None:
        link = self.link(self._shard_of(channel))
        self._routes[channel] = link
        link.adopt(channel, followers, ready)

    def _reroute_later(self, channel: bytes, followers: list[Inbox], gone: Hashable) -> None:
        """The server unsubscribed ``channel``: the node ``gone`` no longer serves its
        slot (a failover, a slot migrated). The slot map is asked for again until it names
        another node (a node that has not heard of the change yet answers the old map),
        then the channel is routed there; without a refresh (one Redis), at once."""
        if self._routes.get(channel) is not None and self._routes[channel].shard == gone:
            del self._routes[channel]
        if self._refresh is None:
            self._reroute(channel, followers)
            return

        async def refreshed() -> None:
            pause = 0.05
            for _ in range(_REROUTE_TRIES):
                if await self._refreshed() and self._serves(channel) not in (gone, None):
                    break
                await asyncio.sleep(pause)
                pause = min(pause * 2, 1.0)
            self._reroute(channel, followers)

        task = asyncio.get_running_loop().create_task(refreshed())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def _serves(self, channel: bytes) -> Hashable:
        """The shard serving ``channel`` on the slot map as it is; None when none does."""
        try:
            return self._shard_of(channel)
        except (*_LOST, redis.RedisError):
            return None

    async def _refreshed(self) -> bool:
        """Ask for the slot map again; False when no node answers it (a failover still
        under way: the caller tries again later)."""
        if self._refresh is None:
            return False
        try:
            await self._refresh()
        except (*_LOST, redis.RedisError) as error:
            log.info("fanout_slot_map_unavailable", error=str(error))
            return False
        return True

    async def _relocate(self, link: Link) -> None:
        """``link`` lost its connection: on a cluster its node may have failed over. The
        slot map is asked for again, and every channel of the link whose slot another node
        serves now moves to that node's link (its followers re-read once subscribed
        there); the rest wait for the link to reconnect."""
        if not await self._refreshed():
            return

        def stays(channel: bytes) -> bool:  # no node serves the slot yet: ask again after the next try
            return self._serves(channel) in (link.shard, None)

        for channel, (followers, ready) in link.give_up(stays).items():
            log.info("fanout_channel_moved", channel=channel.decode(errors="replace"), node=str(self._shard_of(channel)))
            self._reroute(channel, followers, ready)

    async def aclose(self) -> None:
        for task in list(self._pending):
            task.cancel()
        links, self._links, self._routes = list(self._links.values()), {}, {}
        for link in links:
            await link.aclose()


def _slot_map(client: aiocluster.RedisCluster) -> Callable[[], Awaitable[None]]:
    async def prepare() -> None:
        if getattr(client, "_initialize", False):  # the slot map is not in yet
            await client.initialize()
    return prepare


def _slot_map_again(client: aiocluster.RedisCluster) -> Callable[[], Awaitable[None]]:
    async def refresh() -> None:
        await client.nodes_manager.initialize()
    return refresh


def _settle_like(waiting: asyncio.Future[None], done: asyncio.Future[None]) -> None:
    """Resolve ``waiting`` as ``done`` was (a confirmation handed over to another link's)."""
    if waiting.done():
        return
    if done.cancelled():
        waiting.cancel()
    elif (error := done.exception()) is not None:
        waiting.set_exception(error)
    else:
        waiting.set_result(None)


def _node_of(client: aiocluster.RedisCluster, channel: bytes) -> str:
    """The name (host:port) of the node serving ``channel``'s hash slot."""
    node = client.get_node_from_key(channel.decode())
    if node is None:
        raise ConnectionError(f"no node serves the slot of {channel!r}")
    name: str = node.name
    return name


def _node_connection(client: aiocluster.RedisCluster, name: Hashable) -> Any:
    """A connection of its own to the node ``name``, with the client's settings for it."""
    node: Any = client.get_node(node_name=str(name))
    if node is None:
        raise ConnectionError(f"the cluster has no node {name}")
    return node.connection_class(**node.connection_kwargs)

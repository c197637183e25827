"""Stream starts let in a few at a time (docs/gateway.md, "Sockets": "Stream starts").

Opening a stream costs a gateway a dozen Redis round trips (the token, the table, the
shared socket quota, presence, the first view, the subscription) before its first push;
a socket that then follows its table costs one read a push. When thousands of sockets
open at once (a gateway restarted, a deployment's clients reconnecting, a bench's start),
doing every start together queues them all behind the gateway's Redis connections: each
start then waits longer than the store's deadline, fails ``unavailable``, and its client
reconnects into the same queue, so the gateway spends itself on starts that never finish.

So at most ``starting`` starts run at once on a gateway, in the order they came; up to
``waiting`` more wait for one of their places, each at most ``wait_s``. A start beyond
those (the queue is full, or its wait ran out) is turned away at once, at no Redis cost:
its socket is closed with 1013 (try again later) and the reason ``busy``, and its client
reconnects after a pause, as after any 1013 (docs/api.md, "Playing"). A socket let in
holds its place only for its start: from then on it follows its table like any other.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Callable
from typing import Final

STARTING: Final = 32  # starts at once on one gateway: enough to keep its Redis connections busy
WAITING: Final = 10_000  # starts waiting for a place, at most (a gateway holds 10,000 connections)
WAIT_S: Final = 30.0  # the longest a start waits for a place


class Busy(Exception):
    """A stream start turned away: too many waiting, or it waited ``wait_s``."""


class Admission:
    """The places for stream starts on one gateway, given first come, first served."""

    def __init__(self, starting: int = STARTING, waiting: int = WAITING, wait_s: float = WAIT_S) -> None:
        if starting < 1 or waiting < 0 or wait_s <= 0:
            raise ValueError("starting >= 1, waiting >= 0 and wait_s > 0")
        self.starting = starting
        self.waiting = waiting
        self.wait_s = wait_s
        self._running = 0
        self._queue: collections.deque[asyncio.Future[None]] = collections.deque()
        self.turned_away = 0  # starts turned away since the gateway started

    @property
    def running(self) -> int:
        return self._running

    @property
    def queued(self) -> int:
        return len(self._queue)

    async def enter(self) -> Place:
        """A place for one stream start, until its ``leave``; ``Busy`` when none comes."""
        await self._enter()
        return Place(self._leave)

    async def _enter(self) -> None:
        if self._running < self.starting and not self._queue:
            self._running += 1
            return
        if len(self._queue) >= self.waiting:
            self.turned_away += 1
            raise Busy(f"{len(self._queue)} stream starts are waiting already")
        place: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append(place)
        try:
            async with asyncio.timeout(self.wait_s):
                await place  # ``_leave`` hands its place over: ``_running`` stays counted
        except BaseException as error:
            if place.done() and not place.cancelled():
                self._leave()  # a place came just as the wait ended: it goes to the next
            else:
                with contextlib.suppress(ValueError):
                    self._queue.remove(place)
            if isinstance(error, TimeoutError):
                self.turned_away += 1
                raise Busy(f"no place to start a stream came within {self.wait_s:g} s") from None
            raise

    def _leave(self) -> None:
        while self._queue:
            place = self._queue.popleft()
            if not place.done():
                place.set_result(None)  # the place goes to the next start waiting
                return
        self._running -= 1


class Place:
    """One start's place: ``leave`` gives it to the next start waiting (once; again is nothing)."""

    __slots__ = ("_leave",)

    def __init__(self, leave: Callable[[], None]) -> None:
        self._leave: Callable[[], None] | None = leave

    def leave(self) -> None:
        leave, self._leave = self._leave, None
        if leave is not None:
            leave()

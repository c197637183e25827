"""A person is at a table: the gateway's side of the idle record (``services/bots/idle.py``).

``Presence.touch`` moves a table's idle time on by the grace of its status (a started
table ``MIGHTY_IDLE_S``, an open one ``MIGHTY_IDLE_OPEN_S``), by the Redis server's
clock. The lobby calls it (through the backend) when a person creates a table, joins,
leaves or sends a command; ``watch`` calls it every few seconds while a person's
WebSocket stream is open (a stream opened with a token: bots have none, and a watcher
without a token keeps nothing alive). Touches of one table are sent at most once per
``min(5 s, the refresh period / 2)`` by a gateway (the same status), so a busy table costs
little; a touch that fails is not the command's failure (logged at debug level: the
table's next touch, or its idle close, follows).

The same watcher says which player is connected to the table (``Presence.here``, the
record of ``services/bots/gone.py``: the player, stamped by the Redis server's clock):
every ``Lifecycle.watch_every_s`` while the stream is open (at least three times within
``MIGHTY_AWAY_AFTER_GONE_S``) and once more as it closes. The timer worker sends away a
seat at a playing table whose player has not been connected for that long. A player's
move stamps the record too, but only one that exists (``known_only``): a player who never
opened a stream of the table is left to the timeouts rule (docs/bots.md, "Away seats").
A move's stamp is not sent within ``watch_every_s`` of a stamp by the watcher of the
player's open stream on the same gateway: that watcher stamps again within it, and a
stamp a command was a script call a command for nothing. Once the stream has
closed (its last stamp), each move stamps again. With ``MIGHTY_AWAY_AFTER_GONE_S`` 0
nothing is stamped.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any, Final

import structlog

from services.bots.gone import HERE, seen_key, seen_member
from services.bots.idle import TOUCH, idle_key
from services.store.keys import KeySpace

if TYPE_CHECKING:
    from services.app.lifecycle import Lifecycle
    from services.gateway.backend import Backend

log = structlog.get_logger("mighty.gateway")

REMEMBERED: Final = 1024  # tables whose last touch a gateway keeps (then forgotten at once)
_SAME_TOUCH_S: Final = 5.0


class Presence:
    """Touches of the idle record and stamps of who is connected, over the backend's
    coalesced pipeline."""

    def __init__(self, coalesced: Any, space: KeySpace, lifecycle: Lifecycle) -> None:
        self._coalesced = coalesced
        self._key = idle_key(space)
        self._seen = seen_key(space)
        self.lifecycle = lifecycle
        self._quiet_s = min(_SAME_TOUCH_S, lifecycle.presence_every_s / 2)
        self._last: dict[tuple[str, str], float] = {}
        # (table, player) -> when this gateway's watcher of their stream last stamped them
        # there (a move's stamp within ``_stamp_quiet_s`` of it is not sent: the watcher
        # goes on stamping while the stream is open)
        self._watched: dict[tuple[str, str], float] = {}
        self._stamp_quiet_s = lifecycle.watch_every_s  # the watcher stamps again within it

    async def touch(self, table_id: str, status: str) -> None:
        if status not in ("open", "playing"):  # a finished table has nothing left to close
            return
        now = time.monotonic()
        if now - self._last.get((table_id, status), -1e9) < self._quiet_s:
            return
        if len(self._last) >= REMEMBERED:
            self._last.clear()
        self._last[(table_id, status)] = now
        grace_ms = round(self.lifecycle.idle_after_s(status) * 1000)
        try:
            await self._coalesced.call(("EVAL", TOUCH, 1, self._key, table_id, grace_ms))
        except Exception as error:  # noqa: BLE001 - presence is best effort, never a command's failure
            self._last.pop((table_id, status), None)
            log.debug("presence_not_recorded", table=table_id, error=str(error)[:200])

    async def here(self, table_id: str, player: str, *, known_only: bool = False, leaving: bool = False) -> None:
        """``player`` is connected to the table now (``known_only``: a move's stamp, only if
        they have been before, by a stream; ``leaving``: the watcher's last stamp, as the
        stream closes). Best effort, like ``touch``: never raises."""
        if self.lifecycle.away_after_gone_s <= 0:
            return
        key, now = (table_id, player), time.monotonic()
        if known_only:
            if now - self._watched.get(key, -1e9) < self._stamp_quiet_s:
                return  # their stream's watcher here stamped a moment ago, and goes on
        elif leaving:
            self._watched.pop(key, None)  # from now on each move stamps: the bound counts from it
        else:
            if len(self._watched) >= REMEMBERED:
                self._watched.clear()
            self._watched[key] = now
        try:
            await self._coalesced.call(("EVAL", HERE, 1, self._seen, seen_member(table_id, player),
                                        "XX" if known_only else ""))
        except Exception as error:  # noqa: BLE001 - presence is best effort, never a command's failure
            if not known_only:
                self._watched.pop(key, None)
            log.debug("presence_not_recorded", table=table_id, error=str(error)[:200])


_watching: set[asyncio.Task[None]] = set()  # the watchers running (kept from the GC)


def watch(backend: Backend, table_id: str, status: str, player: str) -> asyncio.Task[None]:
    """While the task runs (a person's stream is open), the table is not idle and the
    player is connected to it; its end is the player's last moment there."""
    task = asyncio.create_task(_keep_alive(backend, table_id, status, player))
    _watching.add(task)
    task.add_done_callback(_watching.discard)
    return task


def unwatch(task: asyncio.Task[None] | None) -> None:
    if task is not None:
        task.cancel()


async def _keep_alive(backend: Backend, table_id: str, status: str, player: str) -> None:
    every_s = backend.lifecycle.watch_every_s
    live = status in ("open", "playing")
    try:
        while True:
            cached = backend.cached(table_id)  # the table may have started (or ended) since the stream opened
            status = cached[0].status if cached is not None else status
            live = status in ("open", "playing")  # a finished table has no seat left to send away
            with contextlib.suppress(Exception):
                await backend.touch(table_id, status)
            if live:
                await backend.here(table_id, player)
            await asyncio.sleep(every_s)
    finally:  # the stream closed (the task cancelled): the time gone counts from now
        if live:
            await asyncio.shield(backend.here(table_id, player, leaving=True))

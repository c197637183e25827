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
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any, Final

import structlog

from services.bots.idle import TOUCH, idle_key
from services.store.keys import KeySpace

if TYPE_CHECKING:
    from services.gateway.backend import Backend
    from services.gateway.lifecycle import Lifecycle

log = structlog.get_logger("mighty.gateway")

REMEMBERED: Final = 1024  # tables whose last touch a gateway keeps (then forgotten at once)
_SAME_TOUCH_S: Final = 5.0


class Presence:
    """Touches of the idle record, over the backend's coalesced pipeline."""

    def __init__(self, coalesced: Any, space: KeySpace, lifecycle: Lifecycle) -> None:
        self._coalesced = coalesced
        self._key = idle_key(space)
        self.lifecycle = lifecycle
        self._quiet_s = min(_SAME_TOUCH_S, lifecycle.presence_every_s / 2)
        self._last: dict[tuple[str, str], float] = {}

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


_watching: set[asyncio.Task[None]] = set()  # the watchers running (kept from the GC)


def watch(backend: Backend, table_id: str, status: str) -> asyncio.Task[None]:
    """While the task runs (a person's stream is open), the table is not idle."""
    task = asyncio.create_task(_keep_alive(backend, table_id, status))
    _watching.add(task)
    task.add_done_callback(_watching.discard)
    return task


def unwatch(task: asyncio.Task[None] | None) -> None:
    if task is not None:
        task.cancel()


async def _keep_alive(backend: Backend, table_id: str, status: str) -> None:
    every_s = backend.lifecycle.presence_every_s
    while True:
        cached = backend.cached(table_id)  # the table may have started since the stream opened
        with contextlib.suppress(Exception):
            await backend.touch(table_id, cached[0].status if cached is not None else status)
        await asyncio.sleep(every_s)

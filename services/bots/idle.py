"""Idle tables are closed by the service (docs/bots.md, "Idle tables"): a table where no
person has acted (a command, a join, a leave, its creation) or watched (a WebSocket
stream opened with a player's token) for a while gets ``CloseTable(reason="idle")``,
an event like any other: a hand in progress has its deal revealed, and the table is
archived as every closed table is.

The record is the sorted set ``<ns>:{timers}:idle`` (member: the table; score: when it
falls idle, in ms by the Redis server's clock). The gateway moves a table's time on each
time a person acts there and, while a person's stream is open, every few seconds
(``services/gateway/presence.py``): ``TOUCH`` with the grace of the table's status
(``MIGHTY_IDLE_S`` once started, ``MIGHTY_IDLE_OPEN_S`` before). The timer worker
(``services/bots/timers.py``) enters a table it sees a turn of and that has no time yet
(``ENROL``: a table created before this record, or by a tool beside the gateway, ends
too), and closes the tables whose time has passed (``IdleCloser.run_once``). Bots'
moves and the service's own steps go through the workers, never the gateway: they are
not a person's activity, so a table of bots that nobody watches ends.
"""

from __future__ import annotations

from typing import Any, Final

import redis
import structlog

from domain.errors import MightyError
from domain.table import CloseTable, Submission
from services.commands.tables import TableHandler
from services.store.cluster import CLUSTER_UNAVAILABLE
from services.store.errors import StoreError
from services.store.keys import KeySpace

log = structlog.get_logger("mighty.timers")

IDLE: Final = "idle"  # the reason of a table closed for want of a person
_NOW: Final = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
"""
# KEYS[1] the idle set; ARGV[1] the table, ARGV[2] the grace (ms): a person is there now.
TOUCH: Final = _NOW + "return redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])"
# The same for a table that has no time yet (the timer worker, from a turn it sees).
ENROL: Final = _NOW + "return redis.call('ZADD', KEYS[1], 'NX', now + tonumber(ARGV[2]), ARGV[1])"
# KEYS[1] the idle set; ARGV[1] how many: {now, {table, due, table, due, ...}} of the due.
DUE: Final = _NOW + "return {now, redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, " \
                    "tonumber(ARGV[1]))}"
# KEYS[1] the idle set; ARGV[1] the table, ARGV[2] the due time handled: the table is
# dropped unless a person came meanwhile (its time moved on).
DROP: Final = """
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if due and tonumber(due) <= tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""
ENROLLED: Final = 4096  # tables this worker entered already (a bounded memory: a re-entry is harmless)
_RETRY_MS = 60_000  # a table that could not be read or closed is tried again this much later


def idle_key(space: KeySpace) -> str:
    """The idle record: its hash tag puts it on the timers' slot (one primary of a cluster)."""
    return f"{space.namespace}:{{timers}}:idle"


class IdleCloser:
    """The timer worker's part that closes idle tables (``run_once`` each second or so)."""

    def __init__(self, client: Any, space: KeySpace, handler: TableHandler, *, idle_s: float,
                 batch: int = 50) -> None:
        self.client = client
        self.space = space
        self.handler = handler
        self.idle_ms = max(1, round(idle_s * 1000))
        self.batch = batch
        self._enrol = client.register_script(ENROL)
        self._due = client.register_script(DUE)
        self._drop = client.register_script(DROP)
        self._enrolled: set[str] = set()
        self.closed = 0

    def enrol(self, table_id: str) -> None:
        """A table with a turn gets an idle time if it has none (once per table and process)."""
        if table_id in self._enrolled:
            return
        if len(self._enrolled) >= ENROLLED:
            self._enrolled.clear()
        self._enrol(keys=[idle_key(self.space)], args=[table_id, self.idle_ms])
        self._enrolled.add(table_id)

    def run_once(self) -> int:
        """Close every table whose idle time has passed (at most ``batch``); how many."""
        now, found = self._due(keys=[idle_key(self.space)], args=[self.batch])
        closed = 0
        for table, due in zip(found[::2], found[1::2], strict=True):
            closed += self._close(bytes(table).decode(), int(float(due)), int(now))
        return closed

    def _close(self, table_id: str, due: int, now: int) -> int:
        try:
            state, version = self.handler.state_of(table_id)
            if state.status in ("new", "closed"):  # gone, or ended meanwhile: nothing to close
                self._forget(table_id, due)
                return 0
            score = self.client.zscore(idle_key(self.space), table_id)
            if score is None or float(score) > due:  # a person came while it was read
                return 0
            self.handler.handle(table_id, Submission(CloseTable(reason=IDLE)), command_id=f"idle-{version}")
        except MightyError as refused:  # closed by another worker or a command meanwhile
            log.debug("idle_close_refused", table=table_id, code=refused.code)
        except (StoreError, redis.RedisError, *CLUSTER_UNAVAILABLE) as error:
            # a table that cannot be read (or closed) now: tried again later, not each pass
            log.warning("idle_close_failed", table=table_id, error=str(error)[:200])
            self.client.zadd(idle_key(self.space), {table_id: now + _RETRY_MS}, xx=True)
            return 0
        else:
            self.closed += 1
            log.debug("table_closed", table=table_id, reason=IDLE, was=state.status, version=version)
        self._forget(table_id, due)
        return 1

    def _forget(self, table_id: str, due: int) -> None:
        self._drop(keys=[idle_key(self.space)], args=[table_id, due])
        self._enrolled.discard(table_id)

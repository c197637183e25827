"""The timer worker: a seat that does not act before its turn's deadline is played by
the service (``TimeOutTurn``: ``TurnTimedOut(seat, reason="timeout")`` and the beginner
bot's move, one command), at tables created with ``turn_seconds``.

Woken like the bot worker, by the turn announcements of the views worker
(``projections/turns.py``). A turn with a time carries its deadline: the append time of
the event that began it (the Redis server's clock, kept in the stream) plus the table's
``turn_seconds``, the same instant the seat's view shows (``projections/views.py``,
``turn_deadline``); a timer worker sets it once per table version by a script
(``SCHEDULE``), so several timer workers and a restarted one agree on it. Deadlines live in the sorted set ``<ns>:{timers}`` (member: the table) and the
document ``<ns>:{timers}:deadline:<table>`` (the turn, its deadline as ISO 8601 UTC and
in ms), which the gateway reads to show a view's ``deadline``. Both carry the hash tag
``{timers}``: the scripts below touch the set and a document together, so on a cluster
they must share a slot (every timer lives on one primary; a timer is written once per
timed turn). Between announcements the worker
waits no longer than the next deadline, then plays each due turn from the seat's stored
view, with the id ``timeout-<version>-<seat>``; a turn played meanwhile is refused
(``not_your_turn``) or found past, and its timer dropped. Each ``TimeOutTurn`` carries
``away_after`` (``MIGHTY_AWAY_AFTER_TIMEOUTS``; 0 for a bot's seat): the table sends a
person's seat away in the same append when that timeout is its ``away_after``-th in a
row (docs/bots.md, "Away seats").

The same worker closes the tables nobody has watched or acted at for a while
(``services/bots/idle.py``): once a second it closes those whose idle time has passed,
and it enters each table it sees a turn of into that record. Once a second too, it sends
away the seats whose player has had no connection to their playing table for
``MIGHTY_AWAY_AFTER_GONE_S`` (``services/bots/gone.py``). It logs a turn timed out
at debug level only (a table whose seat is absent times out every turn), and one
``timers`` summary line a minute when it did something.
"""

from __future__ import annotations

import functools
import time
from datetime import UTC, datetime
from typing import Any, Final

import msgspec
import redis
import structlog

from domain.bots import Budget
from domain.errors import MightyError
from domain.registry import game_of
from domain.table import Submission, TimeOutTurn
from projections.turns import AWAY_LEVEL, Turn
from services.app.steps import send_then_step
from services.bots.gone import GoneSeats
from services.bots.idle import IdleCloser
from services.bots.worker import SeatReader, TurnListener, turn_seed
from services.commands.tables import TableHandler
from services.store.cluster import CLUSTER_UNAVAILABLE, SyncClient
from services.store.errors import StoreUnavailable, VersionConflict
from services.store.keys import KeySpace

log = structlog.get_logger("mighty.timers")

IDLE_EVERY_S: Final = 1.0  # how often the idle tables are looked for
SUMMARY_EVERY_S: Final = 60.0  # at most one summary line this often

# KEYS[1] the deadline document, KEYS[2] the timers set; ARGV[1] the turn (JSON),
# ARGV[2] its version, ARGV[3] turn_seconds, ARGV[4] the table, ARGV[5] the turn's
# deadline in ms as its views show it (0: a turn announced without one, by a views worker
# of an earlier release: the server's clock plus turn_seconds); a turn seen with less than
# half its time left (at most 10 s), after an outage, gets that much from now. A deadline
# is set once per version: a redelivered or second announcement keeps the first.
SCHEDULE: Final = """
local stored = redis.call('GET', KEYS[1])
if stored then
  local version = tonumber(cjson.decode(stored)['turn']['version'])
  if version >= tonumber(ARGV[2]) then return 0 end
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local due = tonumber(ARGV[5])
if due == 0 then due = now + tonumber(ARGV[3]) * 1000 end
-- a turn first seen late (the service was down, Redis was restarting) keeps half its time,
-- ten seconds at most, so an outage never plays a seat the moment it ends
local floor = now + math.min(tonumber(ARGV[3]), 10) * 500
if due < floor then due = floor end
redis.call('SET', KEYS[1], '{"turn":' .. ARGV[1] .. ',"due_ms":' .. due .. '}')
redis.call('ZADD', KEYS[2], due, ARGV[4])
return due
"""
# KEYS[1] the timers set; answers the tables due by the server's clock (at most 50)
DUE: Final = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local next = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {now, redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 50), next[2] or false}
"""
# KEYS[1] the timers set, KEYS[2] the deadline document; ARGV[1] the table, ARGV[2] the
# version handled: dropped unless a newer turn was scheduled meanwhile.
DROP: Final = """
local stored = redis.call('GET', KEYS[2])
if stored and tonumber(cjson.decode(stored)['turn']['version']) > tonumber(ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return 1
"""


class Scheduled(msgspec.Struct, frozen=True):
    turn: Turn
    due_ms: int


_decode_scheduled = msgspec.json.Decoder(Scheduled).decode
_encode = msgspec.json.Encoder().encode


def deadline_key(space: KeySpace, table_id: str) -> str:
    return f"{space.namespace}:{{timers}}:deadline:{table_id}"


def timers_key(space: KeySpace) -> str:
    return f"{space.namespace}:{{timers}}"


@functools.lru_cache(maxsize=1024)  # one turn's deadline goes in every seat's push of a version
def iso_of_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def deadline_of(stored: bytes | None, version: int, seat: int | None) -> str | None:
    """A view's ``deadline``: the stored deadline when it is of that version's seat to act."""
    if stored is None or seat is None:
        return None
    scheduled = _decode_scheduled(stored)
    if scheduled.turn.version != version or scheduled.turn.seat != seat:
        return None
    return iso_of_ms(scheduled.due_ms)


class TimerWorker(TurnListener, SeatReader):
    def __init__(self, client: SyncClient, space: KeySpace, handler: TableHandler, *, poll_s: float = 1.0,
                 idle_s: float = 600.0, summary_s: float = SUMMARY_EVERY_S, away_after: int = 2,
                 away_after_gone_s: int = 0) -> None:
        self.client: Any = client
        self.away_after = away_after  # a person's seat timed out this many turns in a row is away (0: never)
        self.space = space
        self.handler = handler
        self.poll_s = poll_s
        self._rules = {}
        self._levels = {}
        self._decoders = {}
        self._schedule = client.register_script(SCHEDULE)
        self._due = client.register_script(DUE)
        self._drop = client.register_script(DROP)
        self._wait_s = poll_s
        self.timed_out = 0
        self._unreadable = False  # the timers could not be read (an outage): logged once
        self.idle_closer = IdleCloser(client, space, handler, idle_s=idle_s)
        # a seat whose player has had no connection this long is away (0: never)
        self.gone_seats = GoneSeats(client, space, handler, after_s=away_after_gone_s)
        self._next_idle = 0.0
        self.summary_s = summary_s  # MIGHTY_SUMMARY_S
        self._next_summary = time.monotonic() + summary_s
        self._summarised = (0, 0, 0)

    def handle(self, turn: Turn) -> None:
        try:
            self.idle_closer.enrol(turn.table_id)  # every table with a turn ends, idle
        except (redis.RedisError, *CLUSTER_UNAVAILABLE) as error:
            log.warning("idle_not_enrolled", table=turn.table_id, error=str(error))
        if turn.turn_seconds <= 0 or turn.seat is None:
            return
        try:
            self._schedule(keys=[deadline_key(self.space, turn.table_id), timers_key(self.space)],
                           args=[_encode(turn), turn.version, turn.turn_seconds, turn.table_id,
                                 turn.deadline_ms or 0])
        except (redis.RedisError, *CLUSTER_UNAVAILABLE) as error:
            log.warning("timer_not_scheduled", table=turn.table_id, error=str(error))

    def wait_s(self) -> float:
        return self._wait_s

    def idle(self) -> None:
        self._close_idle_tables()
        self._summary()
        try:
            now, due, next_ms = self._due(keys=[timers_key(self.space)])
        except (redis.RedisError, *CLUSTER_UNAVAILABLE) as error:
            if not self._unreadable:  # once per outage, not once per poll
                log.warning("timers_unreadable", error=str(error))
            self._unreadable = True
            self._wait_s = self.poll_s
            return
        if self._unreadable:
            log.info("timers_readable_again")
            self._unreadable = False
        for table in due:
            self._fire(bytes(table).decode())
        # wait until the next deadline, never longer than poll_s
        self._wait_s = self.poll_s if next_ms is None else min(self.poll_s, max(0.01, (float(next_ms) - now) / 1000))

    def _close_idle_tables(self) -> None:
        now = time.monotonic()
        if now < self._next_idle:
            return
        self._next_idle = now + IDLE_EVERY_S
        try:
            self.idle_closer.run_once()
        except (redis.RedisError, *CLUSTER_UNAVAILABLE) as error:
            log.warning("idle_tables_unreadable", error=str(error))
        try:
            self.gone_seats.run_once()
        except (redis.RedisError, *CLUSTER_UNAVAILABLE) as error:
            log.warning("gone_seats_unreadable", error=str(error))

    def _summary(self) -> None:
        """One line a minute of what the worker did, when it did something."""
        now = time.monotonic()
        if now < self._next_summary:
            return
        self._next_summary = now + self.summary_s
        done = (self.timed_out, self.idle_closer.closed, self.gone_seats.sent)
        if done != self._summarised:
            log.info("timers", timed_out=done[0] - self._summarised[0], closed_idle=done[1] - self._summarised[1],
                     sent_away=done[2] - self._summarised[2], seconds=self.summary_s)
            self._summarised = done

    def _fire(self, table_id: str) -> None:
        stored = self.client.get(deadline_key(self.space, table_id))
        if stored is None:
            self.client.zrem(timers_key(self.space), table_id)
            return
        turn = _decode_scheduled(bytes(stored)).turn
        try:
            self._time_out(turn)
        except (StoreUnavailable, VersionConflict, redis.RedisError, *CLUSTER_UNAVAILABLE) as error:
            log.warning("timeout_failed", table=table_id, error=str(error))
            return  # kept: tried again at the next pass
        except MightyError as refused:  # the seat acted just in time, or the table closed
            log.debug("timeout_refused", table=table_id, version=turn.version, code=refused.code)
        self._drop(keys=[timers_key(self.space), deadline_key(self.space, table_id)], args=[table_id, turn.version])

    def _time_out(self, turn: Turn) -> None:
        assert turn.seat is not None
        rules = self.rules_of(turn)
        game = game_of(rules)
        view = self.seat_view(game, turn.table_id, turn.seat)
        if view is None or view.version != turn.version or view.hand is None or view.hand.to_act != turn.seat:
            return  # the turn is past
        policy = game.bots()[AWAY_LEVEL]
        move = policy(rules, view.hand, turn_seed(turn.table_id, turn.version, turn.seat), Budget())
        # A bot's seat is never sent away (its turn timed out because no bot worker ran:
        # it is a bot again when one does); a person's is at its away_after-th in a row.
        away_after = 0 if self.level_of(turn) is not None and not turn.away else self.away_after
        timeout = TimeOutTurn(seat=turn.seat, move=move, away_after=away_after)
        result = send_then_step(self.handler, turn.table_id, Submission(timeout), f"timeout-{turn.version}-{turn.seat}")
        if not result.duplicate:
            self.timed_out += 1
            log.debug("turn_timed_out", table=turn.table_id, seat=turn.seat, version=turn.version)

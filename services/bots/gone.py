"""Seats whose player has gone (docs/bots.md, "Away seats"): a player who has had no
connection to a playing table for ``MIGHTY_AWAY_AFTER_GONE_S`` (30 s) is sent away, so
a bot plays their seat at once instead of the table waiting for their turns to time out.

The record is the sorted set ``<ns>:{timers}:seen`` (member: ``<table> <player>``;
score: when that player was last known connected to that table, in ms by the Redis
server's clock), which every gateway writes (``services/gateway/presence.py``):

- while a person's stream of the table is open, every few seconds (``HERE``; at least
  three times within the bound), and once more when it closes;
- when the player sends a move over HTTP, only if the record exists (``HERE`` with
  ``XX``): a player who has opened a stream there once is there while they act.

A player who never opened a stream of the table (a client playing over HTTP only) has no
record, so this rule never sends them away: only their timed-out turns do
(``MIGHTY_AWAY_AFTER_TIMEOUTS``), and a player acting in time never times out.

A timer worker that has just started, or could not reach Redis, sends nobody away for one
bound: while Redis was unreachable no gateway could stamp, and a player connected all
along has stamped again within the bound.

The timer worker (``services/bots/timers.py``) looks once a second for the records older
than the bound (``GoneSeats.run_once``, at most 50 a pass) and, for a person's seat at a
playing table that is not away yet, sends ``SendAway(seat, gone_s, after_s)`` as the
service (id ``gone-<version>-<seat>``): the table decides by its rule (``gone_away``,
``domain/table.py``) and records ``SeatAway(reason="disconnected")``. Just before, it
reads the record again: a player who came back while the table was read keeps their
seat. The record is then dropped (and so is one of a spectator, of a table not playing,
of a seat already away or a bot's): a player who comes back opens a stream, which writes
it again. Back is as before: opening the stream, joining again, or a move of their own.
"""

from __future__ import annotations

import time
from typing import Any, Final

import redis
import structlog

from domain.errors import MightyError
from domain.table import SendAway, Submission, gone_away
from services.commands.tables import TableHandler
from services.store.cluster import CLUSTER_UNAVAILABLE
from services.store.errors import StoreError
from services.store.keys import KeySpace

log = structlog.get_logger("mighty.timers")

_NOW: Final = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
"""
# KEYS[1] the seen set; ARGV[1] the member, ARGV[2] "XX" (only a record that exists) or "":
# the player is connected to the table now.
HERE: Final = _NOW + """
if ARGV[2] == 'XX' then return redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1]) end
return redis.call('ZADD', KEYS[1], now, ARGV[1])
"""
# KEYS[1] the seen set; ARGV[1] the bound (ms), ARGV[2] how many: {now, {member, seen, ...}}
# of the players gone longer than the bound.
DUE: Final = _NOW + "return {now, redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]), " \
                    "'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))}"
# KEYS[1] the seen set; ARGV[1] the member, ARGV[2] the time seen handled: dropped unless
# the player came back meanwhile (a later time).
DROP: Final = """
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
if seen and tonumber(seen) <= tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""
MOST_S: Final = 10_000  # the largest gone_s a command carries (domain/limits.py Count): longer is as long
_RETRY_S: Final = 60.0  # a record whose table could not be read or written now is looked at again this much later
_REMEMBERED: Final = 4096  # records put off (a bounded memory: forgetting one only retries it sooner)


def seen_key(space: KeySpace) -> str:
    """The record: its hash tag puts it on the timers' slot (one primary of a cluster)."""
    return f"{space.namespace}:{{timers}}:seen"


def seen_member(table_id: str, player: str) -> str:
    """A player at a table (table ids hold no space)."""
    return f"{table_id} {player}"


class GoneSeats:
    """The timer worker's part that sends away the seats whose player has gone."""

    def __init__(self, client: Any, space: KeySpace, handler: TableHandler, *, after_s: int,
                 batch: int = 50, settle_s: float | None = None) -> None:
        self.client = client
        self.space = space
        self.handler = handler
        self.after_s = after_s  # MIGHTY_AWAY_AFTER_GONE_S (0: never)
        self.batch = batch
        self._due = client.register_script(DUE)
        self._drop = client.register_script(DROP)
        self._later: dict[str, float] = {}  # member -> when to look at it again (monotonic)
        # Nobody is sent away before the worker has watched one whole bound (``settle_s``)
        # without an outage: while Redis was unreachable nobody could say they were
        # connected, and a player connected all along has said so again within the bound.
        self.settle_s = float(after_s) if settle_s is None else settle_s
        self._sure_at = time.monotonic() + self.settle_s
        self.sent = 0

    def run_once(self) -> int:
        """Send away every seat gone longer than the bound (at most ``batch``); how many."""
        if self.after_s <= 0:
            return 0
        clock = time.monotonic()
        try:
            now, found = self._due(keys=[seen_key(self.space)], args=[self.after_s * 1000, self.batch])
        except (redis.RedisError, *CLUSTER_UNAVAILABLE):
            self._unsure()
            raise
        if clock < self._sure_at:
            return 0
        sent = 0
        for member, seen in zip(found[::2], found[1::2], strict=True):
            name = bytes(member).decode()
            if self._later.get(name, 0.0) > clock:
                continue
            sent += self._send(name, int(float(seen)), int(now))
        return sent

    def _send(self, member: str, seen: int, now: int) -> int:
        table_id, _, player = member.partition(" ")
        gone_s = min((now - seen) // 1000, MOST_S)
        sent = 0
        try:
            state, version = self.handler.state_of(table_id)
            seat = state.seats.index(player) if player in state.seats else None
            if seat is not None and gone_away(state, seat, gone_s, self.after_s):
                score = self.client.zscore(seen_key(self.space), member)
                if score is None or float(score) > seen:  # the player came back while the table was read
                    return 0
                command = SendAway(seat=seat, gone_s=gone_s, after_s=self.after_s)
                result = self.handler.handle(table_id, Submission(command), command_id=f"gone-{version}-{seat}")
                sent = 0 if result.duplicate else 1
                log.debug("seat_sent_away", table=table_id, seat=seat, gone_s=gone_s, version=version)
            # else: a spectator, a table not playing, a seat away already or a bot's: dropped
        except MightyError as refused:  # sent away, back or closed meanwhile: dropped
            log.debug("send_away_refused", table=table_id, code=refused.code)
        except (StoreError, redis.RedisError, *CLUSTER_UNAVAILABLE) as error:
            log.warning("send_away_failed", table=table_id, error=str(error)[:200])
            self._unsure()
            if len(self._later) >= _REMEMBERED:
                self._later.clear()
            self._later[member] = time.monotonic() + _RETRY_S
            return 0
        self.sent += sent
        self._forget(member, seen)
        return sent

    def _unsure(self) -> None:
        """Redis could not be reached: no stamp can be trusted until a bound has passed."""
        self._sure_at = time.monotonic() + self.settle_s

    def _forget(self, member: str, seen: int) -> None:
        self._drop(keys=[seen_key(self.space)], args=[member, seen])
        self._later.pop(member, None)

"""Every table ends (docs/api.md, "The lobby"; docs/operations.md, "Table lifecycle"):
the match a new table is given, and its creator's close before the start.

- ``hands`` is 1 to ``MIGHTY_MAX_HANDS`` (100); ``0``, which once meant "no end", asks
  for the longest match the service plays (``MIGHTY_MAX_HANDS``). A table of bots only
  (the caller takes no seat and every seat is a bot's) plays at most
  ``MIGHTY_BOT_TABLE_HANDS`` (10): it is shortened, not refused.
- ``turn_seconds`` is ``MIGHTY_TURN_SECONDS_MIN`` (10) to ``MIGHTY_TURN_SECONDS_MAX``
  (3600); ``0``, which once meant "wait for ever", is the default turn, 60 s (within
  them). An absent seat's turn therefore always times out (the timer worker plays it).
- A table that nobody watches or acts at is closed after a while (``services/bots/idle.py``).

Tables stored before these bounds keep their match as created (a stored event is never
edited): the idle close ends them.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Final

import msgspec

from domain.table import CloseTable, Submission
from services.app.errors import Refused
from services.settings import Settings

if TYPE_CHECKING:
    from services.app.ports import Tables

DEFAULT_TURN_SECONDS: Final = 60  # a turn's time when a table asks for none (``turn_seconds: 0``)
PRESENCE_EVERY_S: Final = 30.0  # a watcher's presence is refreshed at least this often


class Lifecycle(msgspec.Struct, frozen=True, kw_only=True):
    """The bounds a new table gets and how long a table may be idle (from ``Settings``)."""

    max_hands: int
    bot_table_hands: int
    turn_seconds_min: int
    turn_seconds_max: int
    idle_s: float
    idle_open_s: float
    away_after_gone_s: int = 0  # a seat whose player has had no stream open this long is away (0: never)

    @classmethod
    def of(cls, settings: Settings) -> Lifecycle:
        return cls(max_hands=settings.max_hands, bot_table_hands=settings.bot_table_hands,
                   turn_seconds_min=settings.turn_seconds_min, turn_seconds_max=settings.turn_seconds_max,
                   idle_s=settings.idle_s, idle_open_s=settings.idle_open_s,
                   away_after_gone_s=settings.away_after_gone_s)

    @property
    def default_turn_seconds(self) -> int:
        return min(max(DEFAULT_TURN_SECONDS, self.turn_seconds_min), self.turn_seconds_max)

    def match(self, hands: int, turn_seconds: int, *, bots_only: bool) -> tuple[int, int]:
        """A new table's ``hands`` and ``turn_seconds``, as asked; refused (422
        ``invalid_request``) outside the bounds."""
        if not 0 <= hands <= self.max_hands:
            raise Refused("invalid_request", f"hands is 1 to {self.max_hands} (0: {self.max_hands}), not {hands}.")
        if turn_seconds != 0 and not self.turn_seconds_min <= turn_seconds <= self.turn_seconds_max:
            raise Refused("invalid_request", f"turn_seconds is {self.turn_seconds_min} to {self.turn_seconds_max} "
                                             f"(0: {self.default_turn_seconds}), not {turn_seconds}.")
        hands = hands or self.max_hands
        if bots_only:
            hands = min(hands, self.bot_table_hands)
        return hands, turn_seconds or self.default_turn_seconds

    def carried(self, hands: int, turn_seconds: int) -> tuple[int, int]:
        """A rematch's match: the old table's, brought within today's bounds (it may be
        older than them)."""
        return (min(hands, self.max_hands),
                0 if turn_seconds == 0 else min(max(turn_seconds, self.turn_seconds_min), self.turn_seconds_max))

    def idle_after_s(self, status: str) -> float:
        """How long a table of ``status`` may go without a person before it is closed."""
        return self.idle_open_s if status == "open" else self.idle_s

    @property
    def presence_every_s(self) -> float:
        """How often an open stream of a person says the table is watched: well within
        the shorter idle time."""
        return min(PRESENCE_EVERY_S, self.idle_s / 4, self.idle_open_s / 4)

    @property
    def watch_every_s(self) -> float:
        """How often an open stream of a person says so: the idle touch's period, and at
        least three times within ``away_after_gone_s``, so a stream that stays open never
        looks gone (services/bots/gone.py)."""
        if self.away_after_gone_s <= 0:
            return self.presence_every_s
        return min(self.presence_every_s, self.away_after_gone_s / 3)


async def close(backend: Tables, table_id: str, player: str) -> None:
    """``POST /tables/{table}/close``: the creator, or the last person seated, closes a
    table that has not started (the rules say who may: ``domain/table.py``)."""
    state, _ = await backend.state(table_id)
    if state.status == "new":
        raise Refused("unknown_table", f"There is no table {table_id}.")
    if state.status == "closed":
        raise Refused("table_closed", f"Table {table_id} is finished.")
    await backend.submit(table_id, Submission(CloseTable(), player), f"close-{player}-{secrets.token_hex(4)}")

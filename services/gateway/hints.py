"""Learners' hints (docs/api.md, "Hints"): what a bot would play at a seat's turn, on a
table whose creator allowed it (``hints``, an unrated table only).

The suggestion is the ``HINT_LEVEL`` bot's command for the seat's own view (what that
seat may see, never the table's whole state), with a seed derived from the table, its
version and the seat (data: the same view and seed give the same hint anywhere), and the
command's label in the reader's language. Nothing here names a game: the view, the bot
and the label are asked of the table's ``Game`` (``domain/games.py``)."""

from __future__ import annotations

import hashlib
from typing import Any, Final

import msgspec

from domain.bots import Budget
from domain.table import TableState
from services.gateway import labels
from services.gateway.errors import ApiError

HINT_LEVEL: Final = "beginner"  # rules of thumb a sensible beginner follows: quick, and worth copying


class Hint(msgspec.Struct, frozen=True):
    command: dict[str, Any]  # as a client sends it back (no seat, no schema version)
    label: str  # the command in the reader's language, as the view's legal entries say it
    level: str  # the bot level that suggests it
    version: int  # the table version the hint is for


def hint_seed(table_id: str, version: int, seat: int) -> int:
    """The hint's seed: the same wherever it is computed (no clock, no random source)."""
    return int.from_bytes(hashlib.sha256(f"hint:{table_id}:{version}:{seat}".encode()).digest()[:8], "big")


def suggest(state: TableState, version: int, seat: int | None, lang: str) -> Hint:
    """The bot's suggested legal command for ``seat``'s current view, or a refusal:
    ``hints_off`` on a table that does not allow hints, ``not_your_seat`` for a spectator,
    ``not_your_turn`` when the seat is not to act."""
    if not state.hints:
        raise ApiError("hints_off", f"Table {state.table_id} does not allow hints (its creator sets hints: true).")
    if seat is None:
        raise ApiError("not_your_seat", "Only a player seated at the table may ask for a hint.")
    game, hand = state.game, state.hand
    if state.status != "playing" or hand is None or game.is_terminal(hand) or game.to_act(hand) != seat:
        raise ApiError("not_your_turn", "A hint is given at your own turn only.")
    view = game.seat_view(hand, seat)  # what the seat may see, and nothing else
    policy = game.bots()[HINT_LEVEL]
    command = policy(state.rules, view, hint_seed(state.table_id, version, seat), Budget())
    label = labels.render(game.presentation.label(view, command), lang)
    shown = {k: v for k, v in msgspec.to_builtins(command).items() if k not in ("seat", "v") and v is not None}
    return Hint(command=shown, label=label, level=HINT_LEVEL, version=version)

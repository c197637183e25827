"""``mighty log``: one readable line per stored event. What a hand keeps secret
(docs/rules/mighty.md §8: the deal, a kitty not turned up, the discards) is shown as a count,
as the event's game says (``Game.log_fields``); every salt is hidden. ``mighty export``
shows a hand once it has ended."""

from __future__ import annotations

from typing import Any

from domain.codec import decode_event, to_builtins
from domain.registry import game_of_event
from services.store.base import StoredEvent


def describe(entry: StoredEvent) -> str:
    """One readable line per event for ``mighty log``."""
    decoded = decode_event(entry.data)
    event = to_builtins(decoded)
    kind = event.pop("type")
    event.pop("v", None)
    game = game_of_event(decoded)
    if game is not None:
        event = game.log_fields(kind, event)
    if "salt" in event:
        event["salt"] = "…"
    fields = " ".join(f"{k}={_short(v)}" for k, v in event.items() if v not in (None, "", [], ()))
    return f"{entry.version:>5}  {kind:<16} {fields}"


def _short(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(_short(v) for v in value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_short(v)}" for k, v in value.items()) + "}"
    return str(value)

"""Commands and replay steps in words, as a menu or the log shows them.

The client knows no rules and no game: what may be sent is the view's ``legal`` list, each
entry with its sentence, ``label``, in the reader's language (docs/api.md, "Games, labels
and languages"). A command has words of the client's own only where the server gave none:
a replay step, which names only its type.
"""

from __future__ import annotations

from typing import Any

from clients.terminal.cards import plain
from clients.terminal.catalog import t


def seat_name(seat: dict[str, Any]) -> str:
    """A seat of the API's Table as a person reads it: the player's name, a bot's level
    beside its name (``Ada · beginner bot``), ``(away)`` while a bot plays for them."""
    name = str(seat.get("name") or "")
    if seat.get("bot"):
        bot = t("terminal.bot", level=seat["bot"])
        name = f"{name} · {bot}" if name else bot
    return f"{name} {t('terminal.away')}" if seat.get("away") else name


def said(command: dict[str, Any], game: str | None = None) -> str:
    """A legal entry as the server names it (its ``label``), else its type and the cards
    it names (a command without a label: none the server sent)."""
    label = command.get("label")
    if isinstance(label, str) and label:
        return label
    cards = command.get("cards") or ([command["card"]] if isinstance(command.get("card"), str) else [])
    return " ".join([str(command.get("type") or "?"), *(plain(str(c), game) for c in cards)])


def refusal(code: str, message: str) -> str:
    return t("terminal.table.refused", code=code, message=message)


def step(entry: dict[str, Any], names: list[str], game: str | None) -> str:
    """A replay step (docs/hand-files.md, ``mighty replay --as``) as one line."""
    if entry.get("type") == "deal" or entry.get("seat") is None:
        return t("terminal.replay.the_deal")
    seat = int(entry["seat"])
    who = names[seat] if seat < len(names) and names[seat] else t("terminal.status.seat", n=seat)
    command = {k: v for k, v in entry.items() if k not in ("index", "seat", "view")}
    command.update(entry.get("command") or {})
    return f"{who}: {said(command, game)}"

"""The review of an ended hand (docs/api.md, "Audit and replay"): on each audit step, the
cards every seat has parted with so far and where each went, so a client can show all the
hands open with the played cards marked.

Nothing here names a game: it reads the audit views' ``remaining`` (every seat's cards in
hand), ``tricks`` and ``trick`` (each a ``leader``, ``cards`` and ``winner``), which every
game's audit view has. A card that leaves a seat's hand between two steps went to the trick
that holds it after the second (numbered from 1), or else was buried (a discard: ``trick``
null). Counted as a multiset, so the two packs' like cards (docs/rules/mighty.md §10) each
count once."""

from __future__ import annotations

from collections import Counter
from typing import Any


def _trick_of(card: str, view: dict[str, Any]) -> int | None:
    """The number (from 1) of the trick that holds ``card`` after the step, else None."""
    tricks = view.get("tricks") or ()
    current = view.get("trick")
    if isinstance(current, dict) and card in (current.get("cards") or ()):
        return len(tricks) + 1
    if tricks and card in (tricks[-1].get("cards") or ()):
        return len(tricks)
    return None


def mark_played(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``steps`` (audit replay steps, in order) with ``played`` on each step's view: per
    seat, ``{"card", "trick"}`` for every card the seat has parted with so far, in the
    order it did. A step whose view has no ``remaining`` is left as it is."""
    played: list[list[dict[str, Any]]] = []
    before: list[Counter[str]] | None = None
    for step in steps:
        view = step.get("view")
        remaining = view.get("remaining") if isinstance(view, dict) else None
        if not isinstance(view, dict) or not isinstance(remaining, list):
            continue
        now: list[Counter[str]] = [Counter(cards) for cards in remaining]
        if before is None or len(before) != len(now):
            played = [[] for _ in now]
        else:
            for seat, (held, holds) in enumerate(zip(before, now, strict=True)):
                gone = held - holds
                for card in sorted(gone.elements()):
                    played[seat].append({"card": card, "trick": _trick_of(card, view)})
        before = now
        view["played"] = [list(marks) for marks in played]
    return steps

"""A stored view (projections/views.py) as the API shows it (API.md, Playing).

The projection's document is already the reader's: the game's views hide what the
reader may not see (rules/mighty.md §8). This only reshapes it: the seat's cards as
``hand``, the phase, whose turn, and the legal commands in the command format (no
``seat``: it is the caller's), the discard step as a count and the cards to pick from.
"""

from __future__ import annotations

from typing import Any

import msgspec

from services.gateway.wire import View

_decode = msgspec.json.Decoder(dict[str, Any]).decode


def api_view(stored: bytes) -> View:
    doc = _decode(stored)
    shown: dict[str, Any] | None = doc.get("hand")
    reader = doc.get("reader")
    seat = int(reader) if isinstance(reader, str) and reader.isdigit() else None
    if shown is None:
        phase = "finished" if doc.get("status") == "closed" else "waiting"
        cards: list[str] | None = None if seat is None else []
        to_act = None
        legal: list[dict[str, Any]] = []
    else:
        phase = shown.get("phase") or "waiting"
        cards = shown.get("hand") if seat is not None else None
        to_act = shown.get("to_act")
        legal = [_command(c) for c in shown.get("legal") or ()]
        if shown.get("discard_count") is not None and seat is not None:
            legal.append({"type": "discard", "count": shown["discard_count"], "from": list(cards or ())})
    return View(
        table=doc["table_id"], version=doc["version"], seat=seat, phase=phase, hand=cards,
        to_act=to_act, deadline=None, legal=legal, status=doc.get("status", ""),
        game=doc.get("variant"), seats=list(doc.get("seats") or ()), dealer=doc.get("dealer", 0),
        hand_no=doc.get("hand_no", 0), hands_scored=doc.get("hands_scored", 0),
        totals=list(doc.get("totals") or ()), commitment=doc.get("commitment"), state=shown,
    )


def _command(command: dict[str, Any]) -> dict[str, Any]:
    """A legal command as a client sends it back: without the seat, the schema version,
    or fields left at their empty default."""
    return {k: v for k, v in command.items() if k not in ("seat", "v") and v is not None}


_encode = msgspec.json.Encoder().encode


def view_frame(stored: bytes) -> bytes:
    view = api_view(stored)
    return b'{"type":"view","version":%d,"view":%s}' % (view.version, _encode(view))

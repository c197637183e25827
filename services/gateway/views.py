"""A stored view (projections/views.py) as the API shows it (API.md, Playing).

The projection's document is already the reader's: the game's views hide what the
reader may not see (rules/mighty.md §8). This only reshapes it: the game's view of the
hand at the top level, and over it the fields API.md names: the seat's cards as
``hand``, the phase, whose turn, the deadline and the legal commands in the command
format (no ``seat``: it is the caller's; the discard step as a count and the cards to
pick from), with the table around it. Hands are numbered from 1 here, as everywhere a
person sees them (API.md, Conventions): ``hand_no`` is the hand being played or last
played (0: none dealt yet).

A closed table's seat views are stored without the hand (compacted: nobody acts there
again), so the last hand of a closed table is shown from the spectator's view, its public
face, which holds its result.
"""

from __future__ import annotations

from typing import Any

import msgspec

from services.gateway.wire import View

_decode = msgspec.json.Decoder(dict[str, Any]).decode
_encode = msgspec.json.Encoder().encode

# The game view's fields the API gives in its own shape, or not at all: the legal
# commands (reshaped), the discard step (folded into ``legal``) and the game's 0-based
# hand number (the table's, from 1, replaces it).
_RESHAPED = frozenset({"legal", "discard_count", "discard_from", "hand_no"})


def compacted(stored: bytes) -> bool:
    """A closed table's seat view without its hand: ``with_public_face`` fills it in."""
    return _compacted(_decode(stored))


def _compacted(doc: dict[str, Any]) -> bool:
    return doc.get("status") == "closed" and doc.get("hand") is None and str(doc.get("reader", "")).isdigit()


def decode_stored(stored: bytes) -> dict[str, Any]:
    """A stored view, decoded once for ``needs_public`` and ``document_of``."""
    return _decode(stored)


def needs_public(doc: dict[str, Any]) -> bool:
    """Whether ``document_of`` needs the table's spectator view (a compacted seat view)."""
    return _compacted(doc)


def view_document(stored: bytes, public: bytes | None = None) -> dict[str, Any]:
    """The API's view document: the game's view of the hand, then the API's fields over
    it. ``public`` is the table's spectator view, for a compacted seat view."""
    return document_of(_decode(stored), public)


def document_of(doc: dict[str, Any], public: bytes | None = None) -> dict[str, Any]:
    """``view_document`` of a decoded stored view (``decode_stored``; the document
    reuses its parts: decode each stored view for one call)."""
    shown: dict[str, Any] | None = doc.get("hand")
    if shown is None and public is not None and doc.get("status") == "closed":
        shown = _decode(public).get("hand")
    reader = doc.get("reader")
    seat = int(reader) if isinstance(reader, str) and reader.isdigit() else None
    closed = doc.get("status") == "closed"
    if shown is None:
        phase = "finished" if closed else "waiting"
        cards: list[str] | None = None if seat is None else []
        to_act = None
        legal: list[dict[str, Any]] = []
    else:
        phase = shown.get("phase") or "waiting"
        cards = (shown.get("hand") or []) if seat is not None else None
        to_act = shown.get("to_act")
        legal = [_command(c) for c in shown.get("legal") or ()]
        if shown.get("discard_count") is not None and seat is not None:
            # the cards the step may take: the game says when not every card of the hand
            # may go (Mitigati's honours stay), else the whole hand
            eligible = shown.get("discard_from", cards)
            legal.append({"type": "discard", "count": shown["discard_count"], "from": list(eligible or ())})
        if closed:
            to_act, legal = None, []  # every command is refused now (table_closed)
    # The game's fields, then the API's (``View``, in its field order) over them: built
    # as a dict directly, the same document as ``View``'s own encoding over the game's.
    document = {k: v for k, v in shown.items() if k not in _RESHAPED} if shown else {}
    document.update(
        table=doc["table_id"], version=doc["version"], seat=seat, phase=phase, hand=cards,
        to_act=to_act, deadline=None, legal=legal, status=doc.get("status", ""),
        game=doc.get("variant"), seats=list(doc.get("seats") or ()), dealer=doc.get("dealer", 0),
        hand_no=doc.get("hand_no", 0), hands_scored=doc.get("hands_scored", 0),
        totals=list(doc.get("totals") or ()), commitment=doc.get("commitment"),
    )
    return document


def api_view(stored: bytes) -> View:
    """The API's own fields of a stored view (what the routes compare and decide on)."""
    return msgspec.convert(view_document(stored), View)


def _command(command: dict[str, Any]) -> dict[str, Any]:
    """A legal command as a client sends it back: without the seat, the schema version,
    or fields left at their empty default. (The decoded dict is this call's own: changed
    in place.)"""
    command.pop("seat", None)
    command.pop("v", None)
    if None in command.values():
        return {k: v for k, v in command.items() if v is not None}
    return command


def view_frame(document: dict[str, Any]) -> bytes:
    return b'{"type":"view","version":%d,"view":%s}' % (document["version"], _encode(document))

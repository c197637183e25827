"""A stored view (projections/views.py) as the API shows it (docs/api.md, "Playing").

The projection's document is already the reader's: the game's views hide what the
reader may not see (docs/rules/mighty.md §8). This only reshapes it: the game's view of the
hand at the top level, and over it the fields docs/api.md names: the seat's cards as
``hand``, the phase, whose turn, the deadline and the legal commands in the command
format (no ``seat``: it is the caller's; the discard step as a count and the cards to
pick from), with the table around it. Hands are numbered from 1 here, as everywhere a
person sees them (docs/api.md, "Conventions"): ``hand_no`` is the hand being played or last
played (0: none dealt yet).

A closed table's seat views are stored without the hand (compacted: nobody acts there
again), so the last hand of a closed table is shown from the spectator's view, its public
face, which holds its result.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec

from domain.games import AnyGame
from domain.presentation import DiscardStep
from projections.docs import Decoder
from services.bots.timers import iso_of_ms
from services.gateway import labels
from services.gateway.wire import View
from services.i18n.catalogs import DEFAULT

_decode = Decoder(dict[str, Any]).decode  # a stored view, in either encoding (projections/docs.py)
_encode = msgspec.json.Encoder().encode  # what a client is sent: JSON

# The game view's fields the API gives in its own shape, or not at all: the legal
# commands (reshaped), the discard step (folded into ``legal``) and the game's 0-based
# hand number (the table's, from 1, replaces it).
_RESHAPED = frozenset({"legal", "discard_count", "discard_from", "discard_takes", "hand_no"})


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


def view_document(stored: bytes, public: bytes | None = None, lang: str = DEFAULT) -> dict[str, Any]:
    """The API's view document: the game's view of the hand, then the API's fields over
    it. ``public`` is the table's spectator view, for a compacted seat view; ``lang`` the
    reader's language, which its labels are in."""
    return document_of(_decode(stored), public, lang)


def document_of(doc: dict[str, Any], public: bytes | None = None, lang: str = DEFAULT) -> dict[str, Any]:
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
        game = labels.game_for(doc.get("variant")) if seat is not None and cards else None
        view = _typed_view(game, shown)
        # the typed view holds the legal commands typed, in the stored order
        typed = getattr(view, "legal", None) or (None,) * len(shown.get("legal") or ())
        legal = [_labelled(game, view, c, t, lang) for c, t in zip(shown.get("legal") or (), typed, strict=True)]
        if game is not None and view is not None:
            order = game.presentation.hand_order(view)
            # the decoded view is this call's own: the derived fields go into it, where
            # a copy would put them (at the end, or in the place of a field of that name)
            if order is not None:
                shown["hand_order"] = list(order)
            facts = game.presentation.facts(view)  # derived as it is sent, never stored
            if facts:
                shown.update(facts)
        if shown.get("discard_count") is not None and seat is not None:
            # the cards the step may take: the game says when not every card of the hand
            # may go (Mitigati's honours stay), else the whole hand
            eligible = list(shown.get("discard_from", cards) or ())
            # mighty-3: one step per set of kitty cards the declarer may keep (``take``),
            # whose cards may be discarded too; every step a command as written
            for take in shown.get("discard_takes") or ((),):
                step: dict[str, Any] = {"type": "discard", "count": shown["discard_count"],
                                        "from": eligible + list(take)}
                if take:
                    step["take"] = list(take)
                step["label"] = _label(game, view, DiscardStep(count=shown["discard_count"], take=tuple(take)), lang)
                legal.append(step)
        if closed:
            to_act, legal = None, []  # every command is refused now (table_closed)
        if shown.get("trick") or shown.get("tricks"):
            _placed(shown, doc.get("variant"))
    # The game's fields, then the API's (``View``, in its field order) over them: built
    # as a dict directly, the same document as ``View``'s own encoding over the game's.
    # The game's view is this call's own: the reshaped fields leave it (the others keep
    # their order) rather than the rest being copied.
    if shown:
        for key in _RESHAPED:
            shown.pop(key, None)
        document = shown
    else:
        document = {}
    document.update(
        table=doc["table_id"], version=doc["version"], seat=seat, phase=phase, hand=cards,
        to_act=to_act, deadline=_deadline(doc, to_act), legal=legal, status=doc.get("status", ""),
        game=doc.get("variant"), seats=list(doc.get("seats") or ()), dealer=doc.get("dealer", 0),
        hand_no=doc.get("hand_no", 0), hands_scored=doc.get("hands_scored", 0),
        totals=list(doc.get("totals") or ()), commitment=doc.get("commitment"),
        away=list(doc.get("away") or ()),
    )
    return document


def _placed(shown: dict[str, Any], variant: object) -> None:
    """Each trick with its ``seats``: who played each card, by the game's direction of
    play (``played_by``: Mighty goes one way round, Mitigati the other), so that a client
    places the cards without knowing the game; derived as it is sent, never stored. The
    decoded tricks are ``document_of``'s own: each gets its ``seats`` in place (every push
    places every trick of the hand so far: a copy of each was most of the cost, a cached
    call a trick most of what was left; the document holds lists, as its JSON does)."""
    players = len(shown.get("hand_sizes") or ())
    if not isinstance(variant, str) or not players:
        return
    seats = _seats_by_leader(variant, players)
    if seats is None:
        return
    current = shown.get("trick")
    tricks = shown.get("tricks") or ()
    for trick in (current, *tricks) if current else tricks:
        if isinstance(trick, dict):
            leader, cards = trick.get("leader") or 0, trick.get("cards") or ()
            if type(leader) is int and 0 <= leader < players and len(cards) <= players:
                trick["seats"] = list(seats[leader][len(cards)])
            else:  # not a trick this game deals: placed as the game says, or not at all
                trick["seats"] = list(_seats(variant, int(leader), len(cards), players))


@functools.lru_cache(maxsize=64)
def _seats_by_leader(variant: str, players: int) -> tuple[tuple[tuple[int, ...], ...], ...] | None:
    """``_seats`` for every leader and every number of cards a trick of ``players`` holds:
    a push places each trick by two indexes (None: no game of that name)."""
    if labels.game_for(variant) is None:
        return None
    return tuple(tuple(_seats(variant, leader, cards, players) for cards in range(players + 1))
                 for leader in range(players))


@functools.lru_cache(maxsize=4096)
def _seats(variant: str, leader: int, cards: int, players: int) -> tuple[int, ...]:
    """Who played each of a trick's ``cards`` led by ``leader`` at a table of ``variant``."""
    game = labels.game_for(variant)
    if game is None:
        return ()
    played_by = game.presentation.played_by
    return tuple(played_by(leader, i, players) for i in range(cards))


def _deadline(doc: dict[str, Any], to_act: int | None) -> str | None:
    """The turn's end as the view holds it (``deadline_ms``, projections/views.py), in
    ISO 8601 UTC; None with nobody to act, at an untimed table, or in a view stored
    before views held it (the gateway then asks the timer worker's document)."""
    ms = doc.get("deadline_ms")
    return None if to_act is None or not isinstance(ms, int) else _iso(ms)


@functools.lru_cache(maxsize=256)
def _iso(ms: int) -> str:
    """``iso_of_ms``, kept for a moment: a change of a table is pushed to each of its
    readers, and every one of their views holds the same deadline."""
    return iso_of_ms(ms)


def api_view(stored: bytes) -> View:
    """The API's own fields of a stored view (what the routes compare and decide on)."""
    return msgspec.convert(view_document(stored), View)


def _typed_view(game: AnyGame | None, shown: dict[str, Any]) -> Any:
    """The game's own view of the hand, for its presentation (None: no game to ask, or a
    stored shape it no longer reads: the labels fall back to the command's type)."""
    if game is None:
        return None
    try:
        return msgspec.convert(shown, game.view_type)
    except msgspec.ValidationError:
        return None


def _label(game: AnyGame | None, view: Any, entry: Any, lang: str) -> str:
    if game is None or view is None:
        return str(getattr(entry, "type", "discard"))
    return labels.label(game.presentation.label(view, entry), lang)


def _labelled(game: AnyGame | None, view: Any, stored: dict[str, Any], typed: Any, lang: str) -> dict[str, Any]:
    """A legal command as the API shows it (``_command``) with its ``label``: the
    sentence its game's presentation says for ``typed`` (the same command, as the game's
    type), rendered for the reader."""
    label = _label(game, view, typed, lang) if typed is not None else str(stored.get("type", ""))
    command = _command(stored)
    command["label"] = label
    return command


def _command(command: dict[str, Any]) -> dict[str, Any]:
    """A legal command as a client sends it back: without the seat, the schema version,
    or fields left at their empty default. (The decoded dict is this call's own: changed
    in place.)"""
    command.pop("seat", None)
    command.pop("v", None)
    if None in command.values():
        return {k: v for k, v in command.items() if v is not None}
    return command


def view_frame(document: dict[str, Any], *, rollback: bool = False) -> bytes:
    """A ``view`` frame; ``rollback``: the view is not newer than the last one the reader
    was sent (or its ``after``): the store went back and this is the table as it is now
    (docs/api.md, "Rollback")."""
    if rollback:
        return b'{"type":"view","version":%d,"rollback":true,"view":%s}' % (document["version"], _encode(document))
    return b'{"type":"view","version":%d,"view":%s}' % (document["version"], _encode(document))

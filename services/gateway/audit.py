"""Audit and replay over a table's stored events (docs/api.md, "Audit and replay"), through
``services/audit/``: the hands, a hand file once its hand has ended, a replay step by
step as a seat, a spectator or the audit saw it, the deal it revealed, and verify.

Nothing here names a game: a hand's deal, its ending and its views are asked of its
``Game`` (``domain/games.py``), found by the registry."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.codec import decode_event
from domain.games import AnyGame
from domain.registry import game_of_event, game_of_hand_file
from domain.table import DealRevealed, TableClosed
from services.audit import HandInProgress, export_hand, verify_events
from services.gateway.errors import ApiError
from services.gateway.labels import render
from services.gateway.review import mark_played
from services.gateway.wire import Deal, HandSummary, Verified
from services.i18n.catalogs import DEFAULT
from services.store.base import StoredEvent

# A hand's number as a person sees it: from 1 (docs/api.md, "Conventions"); the events count from 0.
FIRST_HAND = 1


def api_hand(hand_no: int) -> int:
    return hand_no + FIRST_HAND


def hands_of(stored: list[StoredEvent]) -> list[HandSummary]:
    """Every dealt hand: finished (played out and scored), abandoned (passed out, thrown
    in, bargained away, or cut short by the table closing) or playing, with its scores
    once it has any."""
    hands: list[HandSummary] = []
    game: AnyGame | None = None  # the game of the hand being played
    for entry in stored:
        event = decode_event(entry.data)
        of_event = game_of_event(event)
        if of_event is not None and isinstance(event, of_event.deal_type):
            game = of_event
            number = api_hand(of_event.deal_proof(event).hand_no)
            hands.append(HandSummary(hand=number, status="playing", scores=None))
        elif game is not None and hands and hands[-1].status == "playing":
            last = hands[-1]
            if isinstance(event, game.ends_hand):
                ending = game.hand_ending(event)
                scores = None if ending.scores is None else list(ending.scores)
                hands[-1] = HandSummary(hand=last.hand, status="finished" if ending.finished else "abandoned",
                                        scores=scores)
            elif isinstance(event, TableClosed):
                hands[-1] = HandSummary(hand=last.hand, status="abandoned", scores=None)
    return hands


def hand_file(table_id: str, stored: list[StoredEvent], hand: int) -> dict[str, Any]:
    """The hand file of hand ``hand`` (numbered from 1, the events' ``hand_no`` + 1)."""
    if hand < FIRST_HAND:
        raise ApiError("unknown_hand", f"Hands are numbered from {FIRST_HAND}, not {hand}.")
    try:
        return export_hand(table_id, stored, hand - FIRST_HAND)
    except HandInProgress as secret:
        raise ApiError("hand_in_progress", str(secret)) from None
    except LookupError as missing:
        raise ApiError("unknown_hand", str(missing)) from None


def revealed_deal(stored: list[StoredEvent], hand: int) -> Deal | None:
    """The order, salt and commitment hand ``hand`` (from 1) revealed when it ended
    (docs/rules/mighty.md §2), or None for a hand cut short by its table closing."""
    for entry in stored:
        event = decode_event(entry.data)
        if isinstance(event, DealRevealed) and api_hand(event.hand_no) == hand:
            return Deal(order=list(event.order), salt=event.salt, commitment=event.commitment)
    return None


_encode = msgspec.json.Encoder().encode


def replay_steps(document: dict[str, Any], reader: str, lang: str = DEFAULT) -> list[dict[str, Any]]:
    """``mighty replay --as SEAT`` step by step; ``spectator`` and ``audit`` give the
    same steps with the spectator's or the audit's view of each. One pass: the hand is
    replayed once and the reader's view taken after each step. Each step after the deal
    carries ``label``: its command as the game's presentation says it (the sentence of
    a ``legal`` entry, over the view before the step), in ``lang``; another seat's
    face-down cards (a discard) are said as how many, to any reader but the audit."""
    data = _encode(document)
    game = game_of_hand_file(data)
    run = game.read_hand_file(data)
    if reader.isdigit():
        if int(reader) >= run.players:
            raise ApiError("invalid_request", f"as={reader} is not a seat of 0..{run.players - 1}.")
        outcome = run.replay(int(reader))
    elif reader == "spectator":
        outcome = run.replay(None, game.spectator_view)
    elif reader == "audit":
        # the hand has ended (its file exists), possibly cut short by its table closing
        # with each seat's cards in hand at the step (docs/api.md, "Audit and replay")
        outcome = run.replay(None, lambda state: {
            **msgspec.to_builtins(game.audit_view(state, cut_short=True)),
            "remaining": [list(cards) for cards in game.presentation.remaining(state)]})
    else:
        raise ApiError("invalid_request", f"as is a seat number, spectator or audit, not {reader!r}.")
    steps = [msgspec.to_builtins(step) for step in outcome.steps or ()]
    commands = document.get("commands") or []
    before: Any = None
    for step in steps:
        view = _typed(game, step.get("view"))
        index = step.get("index")
        if isinstance(index, int) and 0 <= index < len(commands):
            # another's face-down cards are said as how many (the reader's own, and the
            # audit's, in full)
            shown = reader == "audit" or str(step.get("seat")) == reader
            step["label"] = _step_label(game, before, commands[index], lang, shown=shown)
        before = view
    # the review: every seat's parted cards and the trick each went to (review.py)
    return mark_played(steps) if reader == "audit" else steps


def _typed(game: AnyGame, view: Any) -> Any:
    """A step's view as the game's view type (the audit's holds ``remaining`` too)."""
    try:
        return msgspec.convert(view, game.view_type)
    except msgspec.ValidationError:
        return None


def _step_label(game: AnyGame, before: Any, raw: Any, lang: str, *, shown: bool) -> str:
    """A step's command as its game says it (``shown``: in full; else what another
    reader may know of it, ``hidden``); its type when either cannot be read."""
    kind = str(raw.get("type", "")) if isinstance(raw, dict) else ""
    if before is None:
        return kind
    try:
        command = msgspec.convert(raw, game.command_union)
    except msgspec.ValidationError:
        return kind
    told = None if shown else game.presentation.hidden(command)
    return render(game.presentation.label(before, command if told is None else told), lang)


def verify(table_id: str, stored: list[StoredEvent]) -> Verified:
    verdict = verify_events(table_id, stored)
    finding = verdict.finding
    return Verified(ok=verdict.ok, events=verdict.events, problem=None if finding is None else finding.problem,
                    hands=verdict.hands, version=None if finding is None else finding.version)

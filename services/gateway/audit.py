"""Audit and replay over a table's stored events (API.md, Audit and replay), through
``services/audit.py``: the hands, a hand file once its hand has ended, a replay step by
step as a seat, a spectator or the audit saw it, and verify."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.codec import decode_event
from domain.games import MIGHTY, MITIGATI_GAME
from domain.mighty import handfile as mighty_files
from domain.mighty.events import HandDealt, HandPassedOut, HandScored, MisdealClaimed
from domain.mitigati import events as mev
from domain.mitigati import handfile as mitigati_files
from domain.table import TableClosed
from services.audit import HandInProgress, export_hand, verify_events
from services.gateway.errors import ApiError
from services.gateway.wire import HandSummary, Verified
from services.store.base import StoredEvent


def hands_of(stored: list[StoredEvent]) -> list[HandSummary]:
    """Every dealt hand: finished (scored), abandoned (thrown in, bargained away, or cut
    short by the table closing) or playing, with its scores once it has any."""
    hands: list[HandSummary] = []
    for entry in stored:
        event = decode_event(entry.data)
        if isinstance(event, HandDealt | mev.HandDealt):
            # the API numbers hands from 1; the events from 0
            hands.append(HandSummary(hand=event.hand_no + 1, status="playing", scores=None))
        elif hands and hands[-1].status == "playing":
            last = hands[-1]
            if isinstance(event, HandScored | mev.HandScored):
                hands[-1] = HandSummary(hand=last.hand, status="finished", scores=list(event.scores))
            elif isinstance(event, mev.DealAbandoned):
                hands[-1] = HandSummary(hand=last.hand, status="abandoned", scores=list(event.scores))
            elif isinstance(event, HandPassedOut | MisdealClaimed | TableClosed):
                hands[-1] = HandSummary(hand=last.hand, status="abandoned", scores=None)
    return hands


def hand_file(table_id: str, stored: list[StoredEvent], hand: int) -> dict[str, Any]:
    """The hand file of hand ``hand`` (numbered from 1, the events' ``hand_no`` + 1)."""
    if hand < 1:
        raise ApiError("unknown_hand", f"Hands are numbered from 1, not {hand}.")
    try:
        return export_hand(table_id, stored, hand - 1)
    except HandInProgress as secret:
        raise ApiError("hand_in_progress", str(secret)) from None
    except LookupError as missing:
        raise ApiError("unknown_hand", str(missing)) from None


_encode = msgspec.json.Encoder().encode


def replay_steps(document: dict[str, Any], reader: str) -> list[dict[str, Any]]:
    """``mighty replay --as SEAT`` step by step; ``spectator`` and ``audit`` give the
    same steps with the spectator's or the audit's view of each."""
    mitigati = document.get("rules") == "mitigati"
    files: Any = mitigati_files if mitigati else mighty_files
    game = MITIGATI_GAME if mitigati else MIGHTY
    _, rules = files.parse(_encode(document))
    players = game.players(rules)
    if reader.isdigit():
        if int(reader) >= players:
            raise ApiError("invalid_request", f"as={reader} is not a seat of 0..{players - 1}.")
        hand, _ = files.parse(_encode(document))
        outcome = files.replay(hand, rules, as_seat=int(reader))
        return [msgspec.to_builtins(step) for step in outcome.steps or ()]
    if reader not in ("spectator", "audit"):
        raise ApiError("invalid_request", f"as is a seat number, spectator or audit, not {reader!r}.")
    commands = list(document.get("commands") or ())
    steps: list[dict[str, Any]] = []
    for count in range(len(commands) + 1):
        prefix, _ = files.parse(_encode({**document, "commands": commands[:count]}))
        outcome = files.replay(prefix, rules)
        if outcome.rejected is not None:
            break
        state = outcome.state
        view = game.spectator_view(state) if reader == "spectator" else game.audit_view(state, cut_short=True)
        raw = commands[count - 1] if count else None
        steps.append({"index": None if raw is None else count - 1,
                      "seat": None if raw is None else raw.get("seat"),
                      "type": "deal" if raw is None else str(raw.get("type")),
                      "view": msgspec.to_builtins(view)})
    return steps


def verify(table_id: str, stored: list[StoredEvent]) -> Verified:
    verdict = verify_events(table_id, stored)
    finding = verdict.finding
    return Verified(ok=verdict.ok, events=verdict.events, problem=None if finding is None else finding.problem,
                    hands=verdict.hands, version=None if finding is None else finding.version)

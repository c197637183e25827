"""Mitigati hand files (docs/hand-files.md, "Mitigati files"): parse, check the deal,
replay through the decider. Pure: bytes in, a ``Replay`` out; the CLI prints it and
picks the exit code (0, 2 for a broken file, 3 for a refused command)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import msgspec

from domain.errors import HandFileError, MalformedCommand, RuleError, RuleSetError
from domain.handfiles import (  # one `rejected` object for both games (docs/hand-files.md)
    Rejection,
    rejection,
)
from domain.mitigati.cards import CARDS, DECK
from domain.mitigati.commands import MitigatiCommand
from domain.mitigati.decider import deal_event, decide, evolve
from domain.mitigati.events import MitigatiEvent
from domain.mitigati.rules import PLAYERS, ROUNDS, RuleSet, make_rules, packet_size
from domain.mitigati.state import (
    Abandoned,
    Bargaining,
    Declaring,
    Finished,
    MitigatiState,
    Playing,
    phase_name,
    to_act,
)
from domain.mitigati.views import MitigatiView, seat_view

FORMAT = "mighty-hand/1"


class HandFile(msgspec.Struct, kw_only=True):
    format: str
    rules: str
    dealer: int
    packets: list[list[list[str]]]
    hands: list[list[str]] | None = None
    commands: list[Any] = []
    options: dict[str, Any] = {}


class Step(msgspec.Struct):
    index: int | None  # None: the deal itself
    seat: int | None
    type: str
    view: MitigatiView


class Replay(msgspec.Struct):
    state: MitigatiState
    events: list[MitigatiEvent]
    rejected: Rejection | None = None
    steps: list[Step] | None = None


def parse(data: bytes) -> tuple[HandFile, RuleSet]:
    """Read and check a hand file; anything broken raises ``HandFileError`` (exit 2)."""
    try:
        hand_file = msgspec.json.decode(data, type=HandFile)
    except msgspec.ValidationError as error:
        raise HandFileError(f"The hand file is not well formed: {error}.") from None
    except msgspec.DecodeError as error:
        raise HandFileError(f"The hand file is not valid JSON: {error}.") from None
    if hand_file.format != FORMAT:
        raise HandFileError(f"Unknown format {hand_file.format!r}; expected {FORMAT!r}.")
    try:
        rules = make_rules(hand_file.options)
    except RuleSetError as error:
        raise HandFileError(error.message) from None
    if not 0 <= hand_file.dealer < PLAYERS:
        raise HandFileError(f"Dealer {hand_file.dealer} is not a seat of Mitigati (0, 1 or 2).")
    check_packets(hand_file.packets, hand_file.dealer)
    if hand_file.hands is not None:
        check_hands(hand_file.hands, hand_file.packets)
    return hand_file, rules


def check_packets(packets: list[list[list[str]]], dealer: int) -> None:
    """§2: 5 rounds × 3 packets of 5 (the dealer's last of 8), the deck exactly."""
    if len(packets) != ROUNDS:
        raise HandFileError(f"packets holds {len(packets)} rounds; Mitigati deals {ROUNDS}.")
    for r, row in enumerate(packets):
        if len(row) != PLAYERS:
            raise HandFileError(f"packets[{r}] holds {len(row)} packets; there are {PLAYERS} seats.")
        for seat, packet in enumerate(row):
            size = packet_size(r, seat, dealer)
            if len(packet) != size:
                raise HandFileError(f"packets[{r}][{seat}] holds {len(packet)} cards; it must hold {size}.")
    cards = [c for row in packets for packet in row for c in packet]
    for card in cards:
        if card not in CARDS:
            raise HandFileError(f"{card!r} is not a card of the tarot deck.")
    twice = [c for c, k in Counter(cards).items() if k > 1]
    if twice:
        raise HandFileError(f"{twice[0]} is dealt twice.")
    assert len(cards) == len(DECK)


def check_hands(hands: list[list[str]], packets: list[list[list[str]]]) -> None:
    if len(hands) != PLAYERS:
        raise HandFileError(f"hands holds {len(hands)} hands; there are {PLAYERS} seats.")
    for seat, hand in enumerate(hands):
        dealt = [c for row in packets for c in row[seat]]
        if Counter(hand) != Counter(dealt):
            raise HandFileError(f"hands[{seat}] is not the cards of seat {seat}'s packets.")


def replay(hand_file: HandFile, rules: RuleSet, *, as_seat: int | None = None,
           view: Callable[[MitigatiState], MitigatiView] | None = None) -> Replay:
    """Fold the deal and every command; stop at the first refusal. With a reader (the
    seat ``as_seat``, or ``view`` of the state: a spectator's, the audit's), one step per
    command with the reader's view after it, all in this one pass."""
    if view is None and as_seat is not None:
        seat = as_seat
        view = lambda state: seat_view(state, seat)  # noqa: E731
    packets = tuple(tuple(tuple(p) for p in row) for row in hand_file.packets)
    dealt = deal_event(rules, dealer=hand_file.dealer, packets=packets)
    events: list[MitigatiEvent] = [dealt]
    state = evolve(None, dealt)
    steps = [Step(None, None, "deal", view(state))] if view is not None else None
    for index, raw in enumerate(hand_file.commands):
        try:
            command = decode_command(raw)
            new = decide(state, command)
        except RuleError as error:
            return Replay(state, events, rejection(index, raw, error, as_seat), steps)
        for event in new:
            state = evolve(state, event)
        events.extend(new)
        if steps is not None and view is not None:
            steps.append(Step(index, command.seat, str(raw.get("type")), view(state)))
    return Replay(state, events, None, steps)


def decode_command(raw: object) -> MitigatiCommand:
    """§3: anything not well formed is ``malformed_command``; fields a command does not
    use (the ``amount`` of a pass or a continue, ``v``) are ignored whatever their type."""
    if isinstance(raw, dict):
        unused = {"v"}
        if raw.get("type") == "bargain" and raw.get("action") in ("pass", "continue"):
            unused.add("amount")
        raw = {k: v for k, v in raw.items() if k not in unused}
    try:
        command: MitigatiCommand = msgspec.convert(raw, MitigatiCommand)
    except msgspec.ValidationError as error:
        raise MalformedCommand(f"The command is not well formed: {error}.") from None
    return command


def result_of(state: MitigatiState) -> dict[str, Any]:
    """§9's ``result``: what is known so far, in the order the spec shows."""
    result: dict[str, Any] = {"dealer": state.dealer, "bargain": None}
    if isinstance(state, Abandoned):
        result["bargain"] = {"session": state.session, "payer": state.payer,
                             "seller": state.seller, "amount": state.amount}
    if isinstance(state, Declaring | Playing | Finished):
        result["discards"] = list(state.discards)
        result["declarations"] = msgspec.to_builtins(state.declarations)
    result["tricks"] = []
    if isinstance(state, Playing | Finished):
        result["tricks"] = [{"leader": t.leader, "cards": list(t.cards), "winner": t.winner}
                            for t in state.tricks]
        result["fool"] = None if state.fool is None else msgspec.to_builtins(state.fool)
    if isinstance(state, Finished):
        result["points"] = list(state.points)
    if isinstance(state, Finished | Abandoned):
        result["scores"] = list(state.scores)
    return result


def output_of(outcome: Replay) -> dict[str, Any]:
    """The JSON document `mighty replay` prints for a Mitigati file."""
    state = outcome.state
    out: dict[str, Any] = {"phase": phase_name(state), "result": result_of(state)}
    if isinstance(state, Bargaining):
        out["session"] = state.session
    if to_act(state) is not None:
        out["to_act"] = to_act(state)
    out["events"] = msgspec.to_builtins(outcome.events)
    if outcome.rejected is not None:
        out["rejected"] = msgspec.to_builtins(outcome.rejected)
    return out

"""Hand files (docs/hand-files.md): parse, check the deal, replay through the decider.

Pure: bytes in, a ``Replay`` out. The CLI prints it and picks the exit code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import msgspec

from domain.errors import HandFileError, MalformedCommand, RuleError, RuleSetError
from domain.handfiles import Rejection, rejection, rules_named
from domain.mighty.cards import is_card, is_joker
from domain.mighty.commands import HandCommand
from domain.mighty.decider import deal_event, decide, evolve
from domain.mighty.events import HandEvent, HandScored
from domain.mighty.play import ripper_cards
from domain.mighty.rules import VARIANTS, RuleSet, make_rules
from domain.mighty.state import Bidding, Finished, HandState, Playing, Redeal, phase_name, to_act
from domain.mighty.views import HandView, seat_view
from domain.upcasting import as_version

FORMAT = "mighty-hand/1"


class HandFile(msgspec.Struct, kw_only=True):
    format: str
    rules: str
    dealer: int
    hands: list[list[str]]
    kitty: list[str]
    commands: list[Any] = []
    options: dict[str, Any] = {}
    first_bidder: int | None = None  # for `first_bidder = previous_declarer` after hand 1


class Step(msgspec.Struct):
    index: int | None  # None: the deal itself
    seat: int | None
    type: str
    view: HandView


class Replay(msgspec.Struct):
    state: HandState
    events: list[HandEvent]
    rejected: Rejection | None = None
    steps: list[Step] | None = None


def parse(data: bytes) -> tuple[HandFile, RuleSet]:
    """Read and check a hand file; anything broken raises ``HandFileError`` (exit 2)."""
    try:
        hand_file = msgspec.json.decode(data, type=HandFile)
    except msgspec.ValidationError as error:  # a subclass of DecodeError: catch it first
        named = rules_named(data)
        if isinstance(named, str) and named not in VARIANTS:  # e.g. a misspelt "mitigati"
            known = ", ".join([*VARIANTS, "mitigati"])
            raise HandFileError(f"Unknown rules {named!r}; known: {known}.") from None
        raise HandFileError(f"The hand file is not well formed: {error}.") from None
    except msgspec.DecodeError as error:
        raise HandFileError(f"The hand file is not valid JSON: {error}.") from None
    if hand_file.format != FORMAT:
        raise HandFileError(f"Unknown format {hand_file.format!r}; expected {FORMAT!r}.")
    try:
        rules = make_rules(hand_file.rules, hand_file.options)
    except RuleSetError as error:
        raise HandFileError(error.message) from None
    if not rules.spec.playable:
        raise HandFileError(f"The variant {rules.variant} cannot be replayed by this version yet.")
    check_deal(hand_file, rules)
    return hand_file, rules


def check_deal(hand_file: HandFile, rules: RuleSet) -> None:
    spec = rules.spec
    if len(hand_file.hands) != spec.players:
        raise HandFileError(f"{spec.name} deals {spec.players} hands, the file has {len(hand_file.hands)}.")
    for seat, hand in enumerate(hand_file.hands):
        if len(hand) != spec.hand_size:
            raise HandFileError(f"Seat {seat} was dealt {len(hand)} cards; {spec.name} deals {spec.hand_size}.")
    if len(hand_file.kitty) != spec.kitty_size:
        raise HandFileError(f"The kitty has {len(hand_file.kitty)} cards; {spec.name} has {spec.kitty_size}.")
    seats: tuple[tuple[str, int | None], ...] = (
        ("Dealer", hand_file.dealer), ("First bidder", hand_file.first_bidder))
    for role, where in seats:
        if where is not None and not 0 <= where < spec.players:
            raise HandFileError(f"{role} {where} is not a seat of {spec.name}.")
    cards = [c for hand in hand_file.hands for c in hand] + hand_file.kitty
    for card in cards:
        if not is_card(card):
            raise HandFileError(f"{card!r} is not a card.")
        if card not in spec.deck:
            raise HandFileError(f"{card} is not in the {spec.name} deck.")
    twice = [c for c, k in Counter(cards).items() if k > 1]
    if twice:
        raise HandFileError(f"{twice[0]} is dealt twice.")


def replay(hand_file: HandFile, rules: RuleSet, *, as_seat: int | None = None,
           view: Callable[[HandState], HandView] | None = None) -> Replay:
    """Fold the deal and every command; stop at the first refusal. With a reader (the
    seat ``as_seat``, or ``view`` of the state: a spectator's, the audit's), one step per
    command with the reader's view after it, all in this one pass."""
    if view is None and as_seat is not None:
        seat = as_seat
        view = lambda state: seat_view(state, seat)  # noqa: E731
    first = hand_file.first_bidder
    dealt = deal_event(rules, dealer=hand_file.dealer,
                       hands=tuple(tuple(h) for h in hand_file.hands),
                       kitty=tuple(hand_file.kitty), first_bidder=first)
    events: list[HandEvent] = [dealt]
    state = evolve(None, dealt)
    steps = [Step(None, None, "deal", view(state))] if view is not None else None
    for index, raw in enumerate(hand_file.commands):
        try:
            command = decode_hand_command(used_fields(state, raw))
            new = decide(state, command)
        except RuleError as error:
            return Replay(state, events, rejection(index, raw, error, as_seat), steps)
        for event in new:
            state = evolve(state, event)
        events.extend(new)
        if steps is not None and view is not None:
            steps.append(Step(index, command.seat, str(raw.get("type")), view(state)))
    return Replay(state, events, None, steps)


def decode_hand_command(data: object) -> HandCommand:
    """A hand-file command: anything but a well-formed object is ``malformed_command``."""
    try:
        command: HandCommand = msgspec.convert(data, HandCommand)
    except msgspec.ValidationError as error:
        raise MalformedCommand(f"The command is not well formed: {error}.") from None
    return command


def used_fields(state: HandState, raw: object) -> object:
    """docs/hand-files.md: "Fields a command does not use are ignored", whatever their type; a
    wrong type is ``malformed_command`` only in a field the command uses. The fields whose
    use depends on the moment: ``suit`` (a joker lead only), ``joker_call`` (a Ripper lead
    under option ``joker_call = declared`` only), ``take`` (the discard of a variant with a
    kitty exchange, mighty-3, only) and ``v`` (not a hand-file field)."""
    if not isinstance(raw, dict):
        return raw
    unused = {"v"}
    if raw.get("type") == "play":
        card = raw.get("card")
        lead = isinstance(state, Playing) and not state.trick and isinstance(card, str)
        if not (lead and isinstance(card, str) and is_joker(card)):
            unused.add("suit")
        if not (lead and isinstance(state, Playing) and state.rules.joker_call == "declared"
                and card in ripper_cards(state)):
            unused.add("joker_call")
    elif raw.get("type") == "discard" and state.rules.spec.kitty_keep is None:
        unused.add("take")
    return {key: value for key, value in raw.items() if key not in unused}


def result_of(state: HandState) -> dict[str, Any]:
    """The ``result`` object of docs/hand-files.md: what is known so far."""
    result: dict[str, Any] = {}
    if isinstance(state, Bidding | Redeal):
        return result
    result["declarer"] = state.declarer
    result["contract"] = {"points": state.points, "trump": state.trump}
    if isinstance(state, Playing | Finished):
        if state.friend_known and state.rules.spec.packs > 1:
            result["friends"] = list(state.friends)  # docs/hand-files.md, "Six to eight players"
        elif state.friend_known:
            result["friend"] = state.friend
    if isinstance(state, Finished):  # the example's order: ..., friend, the score, tricks
        scored: HandScored = state.scored
        result.update(declarer_side_points=scored.declarer_side_points, made=scored.made,
                      scores=list(scored.scores))
    if isinstance(state, Playing | Finished):
        result["tricks"] = [
            {"leader": t.leader, "cards": list(t.cards), "winner": t.winner, "points": t.points}
            for t in state.tricks
        ]
    return result


def output_of(outcome: Replay) -> dict[str, Any]:
    """The JSON document `mighty replay` prints."""
    state = outcome.state
    out: dict[str, Any] = {"phase": phase_name(state), "result": result_of(state)}
    if to_act(state) is not None:
        out["to_act"] = to_act(state)
    if isinstance(state, Redeal):
        out["redeal"] = {"reason": state.reason, "claimed_by": state.claimed_by}
    # docs/hand-files.md fixes the printed events at their first shapes: the facts events
    # carry since version 2 (domain/upcasting.py) are left out
    out["events"] = [as_version(event, 1) for event in msgspec.to_builtins(outcome.events)]
    if outcome.rejected is not None:
        out["rejected"] = msgspec.to_builtins(outcome.rejected)
    return out


def to_hand_file(rules: RuleSet, dealt: Any, commands: list[dict[str, Any]]) -> dict[str, Any]:
    """The hand-file document for a dealt hand and its accepted commands (for export)."""
    defaults = make_rules(rules.variant).options()
    options = {k: v for k, v in rules.options().items() if defaults[k] != v}
    return {
        "format": FORMAT, "rules": rules.variant, "options": options, "dealer": dealt.dealer,
        "first_bidder": dealt.first_bidder, "hands": [list(h) for h in dealt.hands],
        "kitty": list(dealt.kitty), "commands": commands,
    }

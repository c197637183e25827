"""docs/hand-files.md, "Refusals": the stable codes, and which wins when several apply."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from domain.errors import RULE_ERRORS, MalformedCommand, RuleError
from domain.mighty.commands import Bid, HandCommand, Pass, Play
from domain.mighty.decider import decide
from domain.mighty.events import HandEvent
from domain.mighty.handfile import decode_hand_command
from tests.unit.helpers import (
    STANDARD_HANDS,
    bid,
    call,
    change_trump,
    claim_misdeal,
    deal,
    discard,
    given,
    pass_,
    play,
    play_cards,
    ready_to_play,
    rules,
    run,
    standard_deal,
)

STABLE = [
    "not_your_turn", "wrong_phase", "bid_too_low", "bid_out_of_range", "already_passed",
    "card_not_in_hand", "bad_discard", "bad_trump_change", "bad_friend_call",
    "must_follow_suit", "illegal_first_lead", "must_play_joker", "joker_suit_required",
    "malformed_command",
]


def test_every_stable_code_of_the_hand_file_format_has_its_error_class() -> None:
    assert set(STABLE) <= set(RULE_ERRORS)
    assert all(issubclass(cls, RuleError) and cls.code == code for code, cls in RULE_ERRORS.items())


def test_codes_added_since_keep_their_own_meaning() -> None:
    # misdeal_not_allowed (docs/rules/mighty.md §3); must_trump, bad_bargain, bad_declaration
    # (docs/hand-files.md, "Mitigati files")
    assert set(RULE_ERRORS) - set(STABLE) == {
        "misdeal_not_allowed", "must_trump", "bad_bargain", "bad_declaration"}


def exchange() -> list[HandEvent]:
    return run([standard_deal()], bid(0, "15 H"), *(pass_(s) for s in range(1, 5)))


def discarded() -> list[HandEvent]:
    return run(exchange(), discard(0, "4C 2C KD"))


def playing() -> list[HandEvent]:
    return run(discarded(), call(0, "QH"))


# One scenario per code: the events so far, the command, the code.
SCENARIOS: dict[str, tuple[Callable[[], list[HandEvent]], HandCommand]] = {
    "not_your_turn": (lambda: [standard_deal()], bid(3, "13 S")),
    "wrong_phase": (exchange, bid(1, "16 S")),
    "bid_too_low": (lambda: run([standard_deal()], bid(0, "15 H")), bid(1, "15 D")),
    "bid_out_of_range": (lambda: [standard_deal()], bid(0, "21 NT")),
    "already_passed": (lambda: run([standard_deal()], pass_(0), bid(1, "13 S"), pass_(2),
                                   pass_(3), bid(4, "14 S"), bid(1, "15 S")), bid(0, "16 S")),
    "card_not_in_hand": (playing, play(0, "QH")),
    "bad_discard": (exchange, discard(0, "4C 2C")),
    "bad_trump_change": (discarded, change_trump(0, "H")),
    "bad_friend_call": (discarded, call(0, "AS")),
    "must_follow_suit": (lambda: play_cards(playing(), "KS"), play(1, "QD")),
    "illegal_first_lead": (playing, play(0, "AH")),
    "must_play_joker": (lambda: play_cards(playing(), "AC KC JC 9C 7C", "3C QC TC 8C"), play(4, "6C")),
    "joker_suit_required": (lambda: play_cards(playing(), "KS 9S 6S 3S 2H"), play(4, "JK")),
    "malformed_command": (lambda: [standard_deal()], Pass(seat=5)),
    "misdeal_not_allowed": (lambda: [standard_deal()], claim_misdeal(4)),
}


@pytest.mark.parametrize("code", list(SCENARIOS))
def test_each_code_names_its_refusal_with_a_sentence(code: str) -> None:
    events, command = SCENARIOS[code]
    error = given(events()).when(command).refused(code)
    assert error.message.endswith(".") and not error.message[0].islower()


def test_a_refused_command_changes_nothing() -> None:
    events = playing()
    state = given(events).state
    with pytest.raises(RuleError):
        decide(state, play(0, "AH"))
    assert given(events).state == state


# ---------------------------------------------------------------- malformed commands


@pytest.mark.parametrize(
    "raw",
    [
        {"seat": 0, "type": "shout"},
        {"type": "pass"},
        {"seat": "0", "type": "pass"},
        {"seat": 0, "type": "bid", "points": "15", "trump": "H"},
        {"seat": 0, "type": "bid", "trump": "H"},
        {"seat": 0, "type": "discard", "cards": "4C 2C KD"},
        {"seat": 0, "type": "play"},
        {"seat": True, "type": "pass"},
    ],
)
def test_a_command_that_does_not_decode_is_malformed(raw: dict[str, object]) -> None:
    with pytest.raises(MalformedCommand):
        decode_hand_command(raw)


@pytest.mark.parametrize(
    "command",
    [Pass(seat=5), Pass(seat=-1), Bid(seat=0, points=15, trump="X"), Play(seat=0, card="1S")],
)
def test_a_seat_out_of_range_a_trump_or_card_not_in_the_notation_is_malformed(command: object) -> None:
    given(standard_deal()).when(command).refused("malformed_command")  # type: ignore[arg-type]


def test_fields_a_command_does_not_use_are_ignored() -> None:
    command = decode_hand_command({"seat": 0, "type": "pass", "card": "AS", "points": 3})
    given(standard_deal()).when(command).accepted()


# ---------------------------------------------------------------- precedence: bidding


def test_malformed_comes_before_wrong_phase() -> None:
    given(playing()).when(bid(0, "15 X")).refused("malformed_command")
    given(playing()).when(Pass(seat=7)).refused("malformed_command")


def test_wrong_phase_comes_before_already_passed() -> None:
    given(exchange()).when(bid(2, "16 S")).refused("wrong_phase")  # seat 2 passed


def test_already_passed_comes_before_not_your_turn() -> None:
    events = run([standard_deal()], pass_(0), bid(1, "13 S"))
    given(events).when(bid(0, "14 S")).refused("already_passed")  # seat 2 is to act


def test_not_your_turn_comes_before_bid_out_of_range() -> None:
    given(standard_deal()).when(bid(2, "25 S")).refused("not_your_turn")


def test_bid_out_of_range_comes_before_bid_too_low() -> None:
    events = run([standard_deal()], bid(0, "15 H"))
    given(events).when(bid(1, "12 S")).refused("bid_out_of_range")


# ---------------------------------------------------------------- precedence: playing


def test_wrong_phase_comes_before_not_your_turn_in_play() -> None:
    given(discarded()).when(play(3, "3S")).refused("wrong_phase")


def test_not_your_turn_comes_before_card_not_in_hand() -> None:
    given(playing()).when(play(2, "AS")).refused("not_your_turn")


def test_card_not_in_hand_comes_before_joker_suit_required() -> None:
    given(playing()).when(play(0, "JK")).refused("card_not_in_hand")


def test_joker_suit_required_comes_before_illegal_first_lead() -> None:
    dealt = deal("JK AS KS QS JS TS AH KH AD AC", *STANDARD_HANDS[1:4],
                 "KD 3H 2H 5D 4D 3D 2D 7C 6C 5C", kitty="4C 3C 2C")
    events = ready_to_play(dealt, discards="4C 2C 3C")
    given(events).when(play(0, "JK")).refused("joker_suit_required")
    given(events).when(play(0, "JK", suit="S")).refused("illegal_first_lead")


def test_must_play_joker_comes_before_must_follow_suit() -> None:
    events = play_cards(playing(), "AC KC JC 9C 7C", "3C QC TC 8C")
    given(events).when(play(4, "3H")).refused("must_play_joker")  # holds clubs and the Joker


def test_an_ignored_joker_call_flag_is_no_refusal_by_default() -> None:
    events = play_cards(playing(), "AC KC JC 9C 7C")
    given(events).when(play(0, "3C", joker_call=False)).accepted()
    events = playing()
    given(events).when(play(0, "KS", joker_call=True)).accepted()


def test_a_ripper_lead_under_joker_call_declared_without_the_flag_is_no_call() -> None:
    events = ready_to_play(standard_deal(rules(joker_call="declared")), discards="4C 2C KD")
    events = play_cards(events, "AC KC JC 9C 7C")
    given(events).when(play(0, "3C")).accepted()

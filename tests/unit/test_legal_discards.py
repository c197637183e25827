"""The discard step's legal commands: a sequence that lists exactly what
``itertools.combinations`` would, in the same order, without making every ``Discard``."""

from __future__ import annotations

import random
from itertools import combinations
from math import comb

import pytest

from domain.mighty.commands import Discard, Pass
from domain.mighty.decider import decide
from domain.mighty.legal import DiscardChoices, legal_commands, nth_combination
from domain.mighty.state import Exchange
from tests.unit.helpers import auction_to, deal, given, rules, standard_deal

HAND = tuple(f"{rank}S" for rank in "AKQJT98765432") + ("JK", "AH", "KH")


def every_discard(hand: tuple[str, ...], count: int, kitty: tuple[str, ...] = (), keep: int | None = None,
                  seat: int = 2) -> list[Discard]:
    takes = [None] if keep is None else list(combinations(kitty, keep))
    return [Discard(seat=seat, cards=cards, take=take) for take in takes
            for cards in combinations(hand + (take or ()), count)]


@pytest.mark.parametrize(("count", "kitty", "keep"), [(3, (), None), (5, (), None), (3, ("2H", "3H", "4H", "5H", "6H"), 3)])
def test_discard_choices_list_every_combination_in_order(count: int, kitty: tuple[str, ...], keep: int | None) -> None:
    choices = DiscardChoices(2, HAND, count, kitty, keep)
    expected = every_discard(HAND, count, kitty, keep)
    assert len(choices) == len(expected)
    assert list(choices) == expected
    assert [choices[i] for i in range(len(choices))] == expected
    assert choices[-1] == expected[-1] and choices[3:7] == expected[3:7]
    assert choices == expected


def test_membership_needs_no_search_and_agrees_with_the_list() -> None:
    kitty = ("2H", "3H", "4H", "5H", "6H")
    choices = DiscardChoices(2, HAND, 3, kitty, 3)
    expected = every_discard(HAND, 3, kitty, 3)
    rng = random.Random(5)
    for command in rng.sample(expected, 200):
        assert command in choices
    outsiders = [
        Discard(seat=1, cards=expected[0].cards, take=expected[0].take),  # another seat
        Discard(seat=2, cards=("KS", "AS", "QS"), take=expected[0].take),  # not in hand order
        Discard(seat=2, cards=("AS", "AS", "KS"), take=expected[0].take),  # a card twice
        Discard(seat=2, cards=("AS", "KS"), take=expected[0].take),  # too few
        Discard(seat=2, cards=("AS", "KS", "QS"), take=("2H", "3H", "7H")),  # not kitty cards
        Discard(seat=2, cards=("AS", "KS", "QS"), take=("3H", "2H", "4H")),  # take out of order
        Pass(seat=2),
    ]
    for command in outsiders:
        assert (command in choices) is (command in expected) is False


def test_out_of_range_indices_raise_index_error() -> None:
    choices = DiscardChoices(0, HAND[:5], 3)
    assert len(choices) == comb(5, 3)
    for index in (10, -11):
        with pytest.raises(IndexError):
            choices[index]
    with pytest.raises(IndexError):
        nth_combination(HAND[:5], 3, 10)


def test_legal_commands_at_the_discard_step_are_the_declarers_discards_and_each_is_accepted() -> None:
    dealt = standard_deal()
    state = given(auction_to(dealt, 0, "13 S")).state
    assert isinstance(state, Exchange) and state.discards is None
    legal = legal_commands(state, 0)
    assert isinstance(legal, DiscardChoices) and len(legal) == comb(13, 3)
    for command in random.Random(1).sample(list(legal), 30):
        decide(state, command)  # accepted: raises on a refusal
    assert legal_commands(state, 1) == []


def test_two_pack_discards_are_counted_without_being_made() -> None:
    spec = rules("mighty-6").spec  # the kitty joins the hand, as many cards go back
    held = tuple(f"c{i}" for i in range(spec.hand_size + spec.kitty_size))
    legal = DiscardChoices(0, held, spec.discard_count)
    assert len(legal) == comb(len(held), spec.discard_count) == 100_947
    middle = legal[len(legal) // 2]
    assert isinstance(middle, Discard) and middle in legal
    assert middle.cards == list(combinations(held, spec.discard_count))[len(legal) // 2]


def test_mighty_3_discards_are_listed_per_kept_kitty_set() -> None:
    dealt = deal("AS KS QS JS TS 9S AH KH QH JH AD KD QD AC KC QC",
                 "8S 7S 6S 5S TH 9H 8H 7H JD TD 9D 8D JC TC 9C 8C",
                 "4S 3S 2S 6H 5H 4H 3H 2H 7D 6D 5D 4D 7C 6C 5C 4C",
                 kitty="JK 3D 2D 3C 2C", ruleset=rules("mighty-3"))
    state = given(auction_to(dealt, 0, "10 S")).state
    assert isinstance(state, Exchange)
    legal = legal_commands(state, 0)
    assert len(legal) == comb(5, 3) * comb(19, 3) == 9_690
    assert list(legal) == every_discard(state.hands[0], 3, state.kitty_left, 3, seat=0)

"""docs/rules/mighty.md §6 (and the payouts of §7): fixed, pagat and the penalty tally."""

from __future__ import annotations

import pytest

from domain.mighty.events import DeclarerAlone, FriendRevealed, HandEvent, HandScored
from domain.mighty.rules import RuleSet
from domain.mighty.scoring import base_stake, hand_scores, is_made, pagat_stake
from domain.mighty.state import Finished
from tests.unit.helpers import given, play_cards, ready_to_play, rules, standard_deal
from tests.unit.test_play import LINE


def scores(ruleset: RuleSet, *, friend: int | None, contract: int, taken: int,
           trump: str = "H", declarer: int = 0) -> tuple[int, ...]:
    return hand_scores(ruleset, declarer=declarer, friend=friend, contract=contract,
                       trump=trump, taken=taken)


# ---------------------------------------------------------------- made, b, fixed (§6 table)


def test_the_contract_is_made_when_the_declarers_side_takes_at_least_its_points() -> None:
    assert is_made(15, 15) and is_made(15, 20)
    assert not is_made(15, 14)


@pytest.mark.parametrize(("contract", "b"), [(13, 1), (14, 2), (15, 3), (16, 4), (17, 5), (18, 6), (19, 7), (20, 8)])
def test_b_is_the_contract_minus_12(contract: int, b: int) -> None:
    assert base_stake(rules(), contract) == b


@pytest.mark.parametrize("contract", range(13, 21))
def test_made_with_a_friend_the_declarer_wins_2b_the_friend_b_and_each_defender_loses_b(contract: int) -> None:
    b = contract - 12
    assert scores(rules(), friend=3, contract=contract, taken=contract) == (2 * b, -b, -b, b, -b)


@pytest.mark.parametrize("contract", range(13, 21))
def test_failed_with_a_friend_the_declarer_loses_2b_the_friend_b_and_each_defender_wins_b(contract: int) -> None:
    b = contract - 12
    assert scores(rules(), friend=3, contract=contract, taken=contract - 1) == (-2 * b, b, b, -b, b)


@pytest.mark.parametrize("contract", range(13, 21))
def test_made_alone_the_declarer_wins_4b_and_each_defender_loses_b(contract: int) -> None:
    b = contract - 12
    assert scores(rules(), friend=None, contract=contract, taken=20, declarer=2) == (-b, -b, 4 * b, -b, -b)


@pytest.mark.parametrize("contract", range(13, 21))
def test_failed_alone_the_declarer_loses_4b_and_each_defender_wins_b(contract: int) -> None:
    b = contract - 12
    assert scores(rules(), friend=None, contract=contract, taken=0, declarer=2) == (b, b, -4 * b, b, b)


def test_only_the_contract_matters_so_taking_20_on_13_still_scores_b_1() -> None:
    assert scores(rules(), friend=1, contract=13, taken=20) == (2, 1, -1, -1, -1)
    assert scores(rules(), friend=1, contract=13, taken=13) == (2, 1, -1, -1, -1)


def test_a_trump_change_scores_the_raised_contract() -> None:
    # 15 H changed to NT is a 16 contract: b = 4
    assert scores(rules(), friend=1, contract=16, trump="NT", taken=16) == (8, 4, -4, -4, -4)


# ---------------------------------------------------------------- pagat


PAGAT = rules(score="pagat")


def test_pagat_15_diamonds_taking_16_is_s_5() -> None:
    assert pagat_stake(PAGAT, 15, "D", 16, alone=False) == 5
    assert scores(PAGAT, friend=1, contract=15, trump="D", taken=16) == (10, 5, -5, -5, -5)


def test_pagat_16_no_trump_taking_18_is_s_16() -> None:
    assert pagat_stake(PAGAT, 16, "NT", 18, alone=False) == 16
    assert scores(PAGAT, friend=1, contract=16, trump="NT", taken=18) == (32, 16, -16, -16, -16)


def test_pagat_17_hearts_taking_20_is_s_22() -> None:
    assert pagat_stake(PAGAT, 17, "H", 20, alone=False) == 22
    assert scores(PAGAT, friend=1, contract=17, trump="H", taken=20) == (44, 22, -22, -22, -22)


def test_pagat_made_is_twice_the_contract_over_the_minimum_plus_the_overtricks() -> None:
    assert pagat_stake(PAGAT, 13, "S", 13, alone=False) == 0
    assert pagat_stake(PAGAT, 14, "S", 17, alone=False) == 2 * 1 + 3


def test_pagat_failed_is_the_shortfall() -> None:
    assert pagat_stake(PAGAT, 16, "S", 12, alone=False) == 4
    assert scores(PAGAT, friend=1, contract=16, trump="S", taken=12) == (-8, -4, 4, 4, 4)


def test_pagat_doubles_for_a_run() -> None:
    assert pagat_stake(PAGAT, 14, "S", 20, alone=False) == 2 * (2 + 6)


def test_pagat_doubles_for_a_back_run_when_the_declarers_side_takes_9_or_fewer() -> None:
    assert pagat_stake(PAGAT, 14, "S", 9, alone=False) == 2 * 5
    assert pagat_stake(PAGAT, 14, "S", 10, alone=False) == 4


def test_pagat_doubles_for_a_final_trump_of_no_trump() -> None:
    assert pagat_stake(PAGAT, 14, "NT", 15, alone=False) == 2 * 3
    assert pagat_stake(PAGAT, 14, "NT", 12, alone=False) == 2 * 2


def test_pagat_doubles_for_playing_alone_and_pays_four_times_s() -> None:
    assert pagat_stake(PAGAT, 14, "S", 15, alone=True) == 2 * 3
    assert scores(PAGAT, friend=None, contract=14, trump="S", taken=15) == (24, -6, -6, -6, -6)


def test_pagat_doubles_multiply() -> None:
    # 20 NT alone taking all 20: S = 2 * 7, doubled for the run, NT and playing alone
    assert pagat_stake(PAGAT, 20, "NT", 20, alone=True) == 14 * 8
    # 15 NT alone taking 5: S = 10, doubled for the back run, NT and playing alone
    assert pagat_stake(PAGAT, 15, "NT", 5, alone=True) == 10 * 8


# ---------------------------------------------------------------- penalty


PENALTY = rules(score="penalty")


def test_penalty_made_each_defender_scores_minus_b_and_nobody_gains() -> None:
    assert scores(PENALTY, friend=1, contract=15, taken=16) == (0, 0, -3, -3, -3)
    assert scores(PENALTY, friend=None, contract=15, taken=16) == (0, -3, -3, -3, -3)


def test_penalty_failed_the_declarer_and_the_friend_score_minus_b() -> None:
    assert scores(PENALTY, friend=1, contract=15, taken=14) == (-3, -3, 0, 0, 0)
    assert scores(PENALTY, friend=None, contract=15, taken=14) == (-3, 0, 0, 0, 0)


def test_penalty_is_not_zero_sum() -> None:
    assert sum(scores(PENALTY, friend=1, contract=20, taken=20)) == -24


# ---------------------------------------------------------------- other table sizes (§7)


def test_mighty_4_pays_4b_2b_and_minus_3b_with_a_friend() -> None:
    assert scores(rules("mighty-4"), friend=1, contract=15, taken=15) == (12, 6, -9, -9)
    assert scores(rules("mighty-4"), friend=1, contract=15, taken=14) == (-12, -6, 9, 9)


def test_mighty_4_pays_9b_and_minus_3b_alone_and_a_failed_solo_is_minus_9b_plus_3b() -> None:
    assert scores(rules("mighty-4"), friend=None, contract=14, taken=14) == (18, -6, -6, -6)
    assert scores(rules("mighty-4"), friend=None, contract=14, taken=13) == (-18, 6, 6, 6)


def test_the_short_variants_have_their_own_b() -> None:
    assert base_stake(rules("mighty-4-short"), 12) == 1
    assert base_stake(rules("mighty-3-short"), 11) == 1
    assert base_stake(rules("mighty-3"), 10) == 1


def test_the_short_variants_score_the_penalty_tally_by_default() -> None:
    assert scores(rules("mighty-4-short"), friend=1, contract=14, taken=14) == (0, 0, -3, -3)
    assert scores(rules("mighty-3-short"), friend=None, contract=13, taken=12) == (-3, 0, 0)


def test_mighty_3_pays_the_lone_declarer_2b_and_each_defender_minus_b() -> None:
    assert scores(rules("mighty-3"), friend=None, contract=12, taken=12) == (6, -3, -3)
    assert scores(rules("mighty-3"), friend=None, contract=12, taken=11) == (-6, 3, 3)


@pytest.mark.parametrize("variant", ["mighty-4-short", "mighty-3-short"])
@pytest.mark.parametrize("score", ["fixed", "pagat"])
def test_fixed_and_pagat_stay_zero_sum_in_the_short_variants(variant: str, score: str) -> None:
    ruleset = rules(variant, score=score)
    friend = None if ruleset.spec.max_friends == 0 else 1
    for contract in range(ruleset.spec.min_bid, 21):
        for taken in range(21):
            assert sum(scores(ruleset, friend=friend, contract=contract, taken=taken)) == 0
            assert sum(scores(ruleset, friend=None, contract=contract, taken=taken)) == 0


# ---------------------------------------------------------------- through whole hands


def final(events: list[HandEvent]) -> HandScored:
    state = given(events).state
    assert isinstance(state, Finished)
    return state.scored


def test_a_whole_hand_alone_scores_4b_for_the_declarer() -> None:
    events = play_cards(ready_to_play(standard_deal(), discards="4C 3C 2C"), *LINE)
    scored = final(events)
    assert (scored.declarer_side_points, scored.made, scored.friend) == (18, True, None)
    assert scored.scores == (4, -1, -1, -1, -1)


def test_the_friends_tricks_count_for_the_declarers_side_once_the_hand_ends() -> None:
    events = play_cards(ready_to_play(standard_deal(), discards="4C 3C 2C", friend="QH"), *LINE)
    assert FriendRevealed(seat=1, call="QH") in events
    scored = final(events)
    assert (scored.declarer_side_points, scored.friend) == (20, 1)
    assert scored.scores == (2, 1, -1, -1, -1)


def test_a_first_trick_friend_won_by_the_declarer_plays_alone_for_scoring_too() -> None:
    events = play_cards(ready_to_play(standard_deal(), discards="4C 3C 2C", friend="first_trick"),
                        *LINE)
    assert DeclarerAlone() in events
    scored = final(events)
    assert scored.friend is None and scored.scores == (4, -1, -1, -1, -1)


def test_a_first_trick_friend_won_by_another_seat_makes_that_seat_the_friend() -> None:
    events = play_cards(ready_to_play(standard_deal(), discards="4C 2C KD", friend="first_trick"),
                        "KS 9S 6S 3S 2H")
    assert FriendRevealed(seat=4, call="first_trick") in events
    state = given(events).state
    assert state.friend == 4 and state.friend_known  # type: ignore[union-attr]


def test_point_cards_among_the_discards_count_for_the_declarers_side() -> None:
    # seat 0 discards the king of diamonds and keeps the Ripper; its lead of the Ripper in
    # trick 9 forces out the Joker, and seat 1 takes the last two tricks (4 points)
    events = ready_to_play(standard_deal(), contract="16 H", discards="4C 2C KD")
    events = play_cards(events, *LINE[:8], "3C KC JC 9C JK", "QH 9H 6H 6C AC")
    scored = final(events)
    assert scored.declarer_side_points == 16 and scored.made
    assert scored.scores == (16, -4, -4, -4, -4)


def test_the_scores_of_a_whole_hand_under_pagat() -> None:
    events = ready_to_play(standard_deal(rules(score="pagat")), discards="4C 3C 2C", friend="QH")
    scored = final(play_cards(events, *LINE))
    # 13 H, the side takes all 20: S = 2 * 0 + 7, doubled for the run
    assert scored.scores == (28, 14, -14, -14, -14)

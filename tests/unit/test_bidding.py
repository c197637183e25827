"""docs/rules/mighty.md §3: bidding."""

from __future__ import annotations

import pytest

from domain.mighty.bidding import hand_worth_halves
from domain.mighty.events import (
    AuctionWon,
    BiddingReopened,
    BidMade,
    HandEvent,
    HandPassedOut,
    KittyTaken,
    MisdealClaimed,
    Passed,
)
from domain.mighty.rules import RuleSet
from domain.mighty.state import Bidding, Exchange, Redeal
from tests.unit.helpers import (
    STANDARD_KITTY,
    bid,
    cards,
    claim_misdeal,
    given,
    pass_,
    rules,
    run,
    standard_deal,
)

KITTY = cards(STANDARD_KITTY)


def test_the_dealer_bids_first_by_default() -> None:
    state = given(standard_deal(dealer=3)).state
    assert isinstance(state, Bidding) and state.to_act == 3


def test_with_first_bidder_left_of_dealer_the_seat_after_the_dealer_bids_first() -> None:
    state = given(standard_deal(rules(first_bidder="left_of_dealer"), dealer=4)).state
    assert isinstance(state, Bidding) and state.to_act == 0


def test_with_first_bidder_previous_declarer_the_dealer_bids_first_in_a_tables_first_hand() -> None:
    state = given(standard_deal(rules(first_bidder="previous_declarer"), dealer=2)).state
    assert isinstance(state, Bidding) and state.to_act == 2


def test_bidding_goes_clockwise() -> None:
    events = run([standard_deal(dealer=3)], pass_(3), bid(4, "13 S"), pass_(0))
    state = given(events).state
    assert isinstance(state, Bidding) and state.to_act == 1


def test_a_bid_is_a_number_of_points_and_a_trump() -> None:
    given(standard_deal()).when(bid(0, "15 H")).then(BidMade(seat=0, points=15, trump="H"))
    given(standard_deal()).when(bid(0, "14 NT")).then(BidMade(seat=0, points=14, trump="NT"))


@pytest.mark.parametrize("points", [0, 12, 21, 40])
def test_a_bid_outside_13_to_20_is_out_of_range(points: int) -> None:
    given(standard_deal()).when(bid(0, f"{points} S")).refused("bid_out_of_range")


def test_a_trump_that_is_not_a_suit_or_no_trump_is_a_malformed_command() -> None:
    given(standard_deal()).when(bid(0, "15 X")).refused("malformed_command")


def test_a_bid_must_be_for_more_points_than_the_standing_bid() -> None:
    events = run([standard_deal()], bid(0, "15 H"))
    given(events).when(bid(1, "14 NT")).refused("bid_too_low")
    given(events).when(bid(1, "16 S")).then(BidMade(seat=1, points=16, trump="S"))


def test_the_same_points_in_no_trump_outbid_a_suit() -> None:
    events = run([standard_deal()], bid(0, "15 H"))
    given(events).when(bid(1, "15 NT")).then(BidMade(seat=1, points=15, trump="NT"))


@pytest.mark.parametrize("trump", ["S", "H", "D", "C"])
def test_the_same_points_in_another_suit_is_not_higher(trump: str) -> None:
    events = run([standard_deal()], bid(0, "15 H"))
    given(events).when(bid(1, f"15 {trump}")).refused("bid_too_low")


def test_the_same_points_in_no_trump_do_not_outbid_no_trump() -> None:
    events = run([standard_deal()], bid(0, "15 NT"))
    given(events).when(bid(1, "15 NT")).refused("bid_too_low")


@pytest.mark.parametrize(
    ("standing", "higher", "lower"),
    [("S", ["C", "D", "H", "NT"], ["S"]), ("C", ["D", "H", "NT"], ["S", "C"]),
     ("D", ["H", "NT"], ["S", "C", "D"]), ("H", ["NT"], ["S", "C", "D", "H"])],
)
def test_with_suit_ranks_break_ties_equal_points_rank_spades_clubs_diamonds_hearts_no_trump(
    standing: str, higher: list[str], lower: list[str]
) -> None:
    events = run([standard_deal(rules(suit_ranks_break_ties=True))], bid(0, f"15 {standing}"))
    for trump in higher:
        given(events).when(bid(1, f"15 {trump}")).accepted()
    for trump in lower:
        given(events).when(bid(1, f"15 {trump}")).refused("bid_too_low")


def test_only_the_seat_to_act_may_bid_or_pass() -> None:
    given(standard_deal()).when(bid(2, "15 H")).refused("not_your_turn")
    given(standard_deal()).when(pass_(1)).refused("not_your_turn")


def test_a_player_who_has_passed_may_not_bid_again_in_this_hand() -> None:
    events = run([standard_deal()], pass_(0), bid(1, "13 S"), pass_(2), pass_(3), bid(4, "14 S"))
    state = given(events).state
    assert isinstance(state, Bidding) and state.to_act == 1  # seat 0 is skipped
    given(events).when(bid(0, "15 S")).refused("already_passed")


def test_with_pass_is_final_off_a_player_who_passed_may_bid_again() -> None:
    events = run([standard_deal(rules(pass_is_final=False))], pass_(0), bid(1, "13 S"),
                 pass_(2), pass_(3), pass_(4))
    given(events).when(bid(0, "14 S")).then(BidMade(seat=0, points=14, trump="S"))


def test_the_auction_ends_when_every_player_but_the_standing_bidder_has_passed() -> None:
    events = run([standard_deal()], pass_(0), bid(1, "13 S"), pass_(2), pass_(3))
    given(events).when(pass_(4)).then(
        Passed(seat=4),
        AuctionWon(declarer=1, points=13, trump="S"),
        KittyTaken(seat=1, cards=KITTY, shown=True),
    )


def test_passes_made_before_the_standing_bid_count_so_a_bid_after_four_passes_wins_at_once() -> None:
    events = run([standard_deal()], pass_(0), pass_(1), pass_(2), pass_(3))
    given(events).when(bid(4, "13 D")).then(
        BidMade(seat=4, points=13, trump="D"),
        AuctionWon(declarer=4, points=13, trump="D"),
        KittyTaken(seat=4, cards=KITTY, shown=True),
    )


def test_with_pass_is_final_off_only_passes_since_the_standing_bid_count() -> None:
    events = run([standard_deal(rules(pass_is_final=False))], pass_(0), pass_(1), pass_(2),
                 pass_(3), bid(4, "13 D"), pass_(0), pass_(1), pass_(2))
    state = given(events).state
    assert isinstance(state, Bidding) and state.to_act == 3
    given(events).when(pass_(3)).then(
        Passed(seat=3),
        AuctionWon(declarer=4, points=13, trump="D"),
        KittyTaken(seat=4, cards=KITTY, shown=True),
    )


def test_a_bid_of_20_no_trump_does_not_end_the_auction_by_itself() -> None:
    events = run([standard_deal()], bid(0, "20 NT"))
    state = given(events).state
    assert isinstance(state, Bidding) and state.to_act == 1
    given(events).when(bid(1, "20 NT")).refused("bid_too_low")
    events = run(events, pass_(1), pass_(2), pass_(3), pass_(4))
    assert isinstance(given(events).state, Exchange)


def test_the_standing_bidder_may_raise_their_own_bid_when_the_turn_comes_round() -> None:
    events = run([standard_deal()], bid(0, "13 S"), bid(1, "14 S"), pass_(2), pass_(3), pass_(4))
    state = given(events).state
    assert isinstance(state, Bidding) and state.to_act == 0
    given(events).when(bid(0, "15 S")).accepted()


def test_the_kitty_goes_to_the_declarer_face_up_by_default() -> None:
    events = auction_won(rules())
    state = given(events).state
    assert isinstance(state, Exchange) and state.declarer == 2
    assert state.hands[2][-3:] == KITTY and len(state.hands[2]) == 13
    assert KittyTaken(seat=2, cards=KITTY, shown=True) in events


def test_with_kitty_shown_off_the_kitty_is_taken_face_down() -> None:
    events = auction_won(rules(kitty_shown=False))
    assert KittyTaken(seat=2, cards=KITTY, shown=False) in events


def auction_won(ruleset: RuleSet) -> list[HandEvent]:
    return run([standard_deal(ruleset)], pass_(0), pass_(1), bid(2, "14 C"), pass_(3), pass_(4))


# ---------------------------------------------------------------- all pass


def test_if_everybody_passes_without_a_bid_one_more_round_is_bid_from_the_same_first_bidder() -> None:
    events = run([standard_deal(dealer=2)], pass_(2), pass_(3), pass_(4), pass_(0))
    given(events).when(pass_(1)).then(Passed(seat=1), BiddingReopened(round=2))
    state = given(run(events, pass_(1))).state
    assert isinstance(state, Bidding) and state.round == 2 and state.to_act == 2


def test_in_the_second_round_every_player_may_bid_again() -> None:
    events = run([standard_deal()], *(pass_(s) for s in range(5)))
    given(events).when(bid(0, "13 H")).accepted()
    events = run(events, pass_(0))
    given(events).when(bid(1, "13 H")).accepted()


def test_if_the_second_round_is_all_passes_too_the_same_dealer_deals_again() -> None:
    events = run([standard_deal(dealer=3)], *(pass_((3 + s) % 5) for s in range(5)),
                 *(pass_((3 + s) % 5) for s in range(4)))
    given(events).when(pass_(2)).then(Passed(seat=2), HandPassedOut())
    state = given(run(events, pass_(2))).state
    assert isinstance(state, Redeal) and state.reason == "passed_out" and state.dealer == 3


def test_after_a_pass_out_every_command_is_in_the_wrong_phase() -> None:
    events = run([standard_deal()], *(pass_(s) for s in range(5)), *(pass_(s) for s in range(5)))
    given(events).when(bid(0, "13 H")).refused("wrong_phase")
    given(events).when(pass_(0)).refused("wrong_phase")


def test_with_pass_is_final_off_all_passes_also_reopen_the_bidding() -> None:
    events = run([standard_deal(rules(pass_is_final=False))], *(pass_(s) for s in range(4)))
    given(events).when(pass_(4)).then(Passed(seat=4), BiddingReopened(round=2))


# ---------------------------------------------------------------- misdeal (§3, option)


def test_a_hand_is_worth_one_per_ace_king_queen_jack_a_half_per_ten_minus_one_for_the_joker() -> None:
    assert hand_worth_halves(cards("AH KH QD JC TS 2S")) == 9
    assert hand_worth_halves(cards("AS JK TH 2C")) == -1  # the Mighty counts 0
    assert hand_worth_halves(cards("JK 3H 2H 5D 4D 3D 2D 7C 6C 5C")) == -2


def test_a_misdeal_claim_is_refused_when_the_option_is_off() -> None:
    given(standard_deal()).when(claim_misdeal(4)).refused("misdeal_not_allowed")


def test_a_player_whose_hand_is_worth_a_half_or_less_may_claim_a_misdeal_and_the_same_dealer_deals_again() -> None:
    dealt = standard_deal(rules(misdeal_claim=True), dealer=1)
    given(dealt).when(claim_misdeal(4)).then(MisdealClaimed(seat=4))
    state = given(dealt, MisdealClaimed(seat=4)).state
    assert isinstance(state, Redeal) and state.reason == "misdeal"
    assert state.claimed_by == 4 and state.dealer == 1


def test_a_misdeal_may_be_claimed_out_of_turn_before_the_claimant_has_bid_or_passed() -> None:
    events = run([standard_deal(rules(misdeal_claim=True))], pass_(0), bid(1, "13 S"))
    given(events).when(claim_misdeal(3)).then(MisdealClaimed(seat=3))


def test_a_misdeal_is_not_claimed_with_a_hand_worth_more_than_a_half() -> None:
    given(standard_deal(rules(misdeal_claim=True))).when(claim_misdeal(2)).refused("misdeal_not_allowed")


def test_a_misdeal_is_not_claimed_after_bidding_or_passing() -> None:
    events = run([standard_deal(rules(misdeal_claim=True), dealer=3)], pass_(3))
    given(events).when(claim_misdeal(3)).refused("misdeal_not_allowed")

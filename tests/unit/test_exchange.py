"""docs/rules/mighty.md §4: kitty, discards, trump change, friend call, 20 NT lead advice."""

from __future__ import annotations

from typing import Any

import pytest

from domain.mighty.commands import CallFriend
from domain.mighty.events import CardsDiscarded, FriendCalled, HandEvent, KittyTaken, TrumpChanged
from domain.mighty.play import ripper
from domain.mighty.state import Exchange, Playing
from tests.unit.helpers import (
    STANDARD_HANDS,
    STANDARD_KITTY,
    auction_to,
    call,
    cards,
    change_trump,
    deal,
    discard,
    given,
    play,
    play_cards,
    rules,
    run,
    standard_deal,
)

DECLARER_HAND = cards(STANDARD_HANDS[0]) + cards(STANDARD_KITTY)


def won(contract: str = "13 H", **options: Any) -> list[HandEvent]:
    """Seat 0 has won the auction with ``contract`` and holds 13 cards."""
    return auction_to(standard_deal(rules(**options)), 0, contract)


def discarded(contract: str = "13 H", **options: Any) -> list[HandEvent]:
    return run(won(contract, **options), discard(0, "4C 2C KD"))


# ---------------------------------------------------------------- kitty and discards


def test_the_declarer_takes_the_kitty_into_hand() -> None:
    state = given(won()).state
    assert isinstance(state, Exchange) and state.hands[0] == DECLARER_HAND


def test_the_kitty_is_turned_face_up_for_everyone_by_default() -> None:
    assert KittyTaken(seat=0, cards=cards(STANDARD_KITTY), shown=True) in won()
    state = given(won()).state
    assert isinstance(state, Exchange) and state.kitty_shown


def test_with_kitty_shown_off_the_kitty_stays_face_down() -> None:
    assert KittyTaken(seat=0, cards=cards(STANDARD_KITTY), shown=False) in won(kitty_shown=False)


def test_the_declarer_discards_any_three_cards_face_down() -> None:
    given(won()).when(discard(0, "AH KS 2C")).then(CardsDiscarded(seat=0, cards=cards("AH KS 2C")))
    state = given(run(won(), discard(0, "AH KS 2C"))).state
    assert isinstance(state, Exchange) and state.discards == cards("AH KS 2C")
    assert len(state.hands[0]) == 10 and not {"AH", "KS", "2C"} & set(state.hands[0])


def test_the_declarer_may_discard_the_kitty_cards_themselves() -> None:
    given(won()).when(discard(0, STANDARD_KITTY)).accepted()


@pytest.mark.parametrize("text", ["4C 2C", "4C 2C KD AS", ""])
def test_discarding_other_than_three_cards_is_a_bad_discard(text: str) -> None:
    given(won()).when(discard(0, text)).refused("bad_discard")


def test_discarding_a_card_not_held_is_a_bad_discard() -> None:
    given(won()).when(discard(0, "4C 2C QH")).refused("bad_discard")


def test_discarding_a_card_twice_is_a_bad_discard() -> None:
    given(won()).when(discard(0, "4C 4C 2C")).refused("bad_discard")


def test_only_the_declarer_discards() -> None:
    given(won()).when(discard(1, "9S 8S 7S")).refused("not_your_turn")


def test_the_declarer_discards_once() -> None:
    given(discarded()).when(discard(0, "AS KS QS")).refused("wrong_phase")


def test_a_discard_naming_something_that_is_not_a_card_is_malformed() -> None:
    given(won()).when(discard(0, "4C 2C ZZ")).refused("malformed_command")


# ---------------------------------------------------------------- trump change


def test_changing_to_another_suit_raises_the_contract_by_two() -> None:
    given(discarded("15 H")).when(change_trump(0, "S")).then(TrumpChanged(seat=0, trump="S", points=17))


def test_changing_from_no_trump_to_a_suit_raises_the_contract_by_two() -> None:
    given(discarded("15 NT")).when(change_trump(0, "D")).then(TrumpChanged(seat=0, trump="D", points=17))


def test_changing_from_a_suit_to_no_trump_raises_the_contract_by_one() -> None:
    given(discarded("15 H")).when(change_trump(0, "NT")).then(TrumpChanged(seat=0, trump="NT", points=16))


def test_a_change_is_refused_when_the_new_contract_would_pass_20() -> None:
    given(discarded("19 H")).when(change_trump(0, "S")).refused("bad_trump_change")
    given(discarded("20 S")).when(change_trump(0, "NT")).refused("bad_trump_change")


def test_a_change_may_reach_exactly_20() -> None:
    given(discarded("18 H")).when(change_trump(0, "C")).then(TrumpChanged(seat=0, trump="C", points=20))
    given(discarded("19 H")).when(change_trump(0, "NT")).then(TrumpChanged(seat=0, trump="NT", points=20))


def test_a_change_to_the_current_trump_is_refused() -> None:
    given(discarded("15 H")).when(change_trump(0, "H")).refused("bad_trump_change")
    given(discarded("15 NT")).when(change_trump(0, "NT")).refused("bad_trump_change")


def test_trump_is_changed_at_most_once() -> None:
    events = run(discarded("15 H"), change_trump(0, "S"))
    given(events).when(change_trump(0, "D")).refused("bad_trump_change")


def test_trump_is_changed_after_the_discard_not_before() -> None:
    given(won("15 H")).when(change_trump(0, "S")).refused("wrong_phase")


def test_only_the_declarer_changes_trump() -> None:
    given(discarded()).when(change_trump(1, "S")).refused("not_your_turn")


def test_trump_is_not_changed_once_the_friend_is_called() -> None:
    events = run(discarded(), call(0, "none"))
    given(events).when(change_trump(0, "S")).refused("wrong_phase")


def test_the_changed_trump_and_raised_contract_carry_into_play_and_the_bid_is_kept() -> None:
    state = given(run(discarded("15 H"), change_trump(0, "NT"), call(0, "none"))).state
    assert isinstance(state, Playing)
    assert (state.points, state.trump) == (16, "NT")
    assert (state.bid_points, state.bid_trump) == (15, "H")


def test_changing_trump_to_spades_moves_the_mighty_to_the_ace_of_diamonds() -> None:
    events = run(discarded("14 H"), change_trump(0, "S"), call(0, "QH"))
    given(events).when(play(0, "AS")).refused("illegal_first_lead")  # now a trump
    given(events).when(play(0, "AD")).accepted()  # the Mighty may lead the first trick


def test_changing_trump_to_clubs_moves_the_ripper_to_the_three_of_spades() -> None:
    events = run(discarded("14 H"), change_trump(0, "C"), call(0, "QH"))
    state = given(events).state
    assert isinstance(state, Playing) and ripper(state) == "3S"
    given(events).when(play(0, "3C")).refused("illegal_first_lead")  # a trump, not the Ripper


# ---------------------------------------------------------------- friend call


def test_a_friend_is_called_by_a_card_and_its_holder_is_the_secret_friend() -> None:
    given(discarded()).when(call(0, "QH")).then(FriendCalled(seat=0, call="card", card="QH", holder=1))
    state = given(run(discarded(), call(0, "QH"))).state
    assert isinstance(state, Playing) and state.friend == 1 and not state.friend_known


def test_the_joker_may_be_called() -> None:
    given(discarded()).when(call(0, "JK")).then(FriendCalled(seat=0, call="card", card="JK", holder=4))


def test_with_spades_trump_the_mighty_ace_of_diamonds_may_be_called() -> None:
    dealt = deal(*STANDARD_HANDS[1:3], STANDARD_HANDS[0], *STANDARD_HANDS[3:], kitty=STANDARD_KITTY)
    events = run(auction_to(dealt, 0, "13 S"), discard(0, "9S 8S 7S"))  # seat 2 holds AD
    given(events).when(call(0, "AD")).then(FriendCalled(seat=0, call="card", card="AD", holder=2))


def test_the_mighty_may_be_called_when_another_seat_holds_it() -> None:
    dealt = deal(*reversed(STANDARD_HANDS), kitty=STANDARD_KITTY)  # seat 4 holds AS
    events = run(auction_to(dealt, 0, "13 H"), discard(0, "5D 4D 3D"))
    given(events).when(call(0, "AS")).then(FriendCalled(seat=0, call="card", card="AS", holder=4))


def test_a_card_in_the_declarers_own_hand_may_not_be_called() -> None:
    given(discarded()).when(call(0, "AH")).refused("bad_friend_call")


def test_a_kitty_card_the_declarer_kept_may_not_be_called() -> None:
    given(discarded()).when(call(0, "3C")).refused("bad_friend_call")


def test_a_discarded_card_may_not_be_called() -> None:
    given(discarded()).when(call(0, "KD")).refused("bad_friend_call")


def test_a_card_outside_the_variants_deck_may_not_be_called() -> None:
    dealt = deal(
        "AS KS QS JS TS AH KH AD KD AC QC JC",
        "9S 8S 7S QH JH TH QD JD KC TC 9C 8C",
        "6S 5S 4S 9H 8H 7H TD 9D 7C 6C 5C 4C",
        "JK 3S 2S 6H 5H 4H 3H 8D 7D 6D 5D 4D",
        kitty="3D 2D 3C", ruleset=rules("mighty-4"),
    )
    events = run(auction_to(dealt, 0, "13 H"), discard(0, "3D 2D 3C"))
    given(events).when(call(0, "2H")).refused("bad_friend_call")


def test_a_friend_call_that_is_not_a_card_first_trick_or_none_is_malformed() -> None:
    given(discarded()).when(call(0, "partner")).refused("malformed_command")


def test_a_first_trick_call_makes_the_winner_of_the_first_trick_the_friend() -> None:
    given(discarded()).when(call(0, "first_trick")).then(FriendCalled(seat=0, call="first_trick"))
    state = given(run(discarded(), call(0, "first_trick"))).state
    assert isinstance(state, Playing) and state.friend is None and not state.friend_known


def test_a_first_trick_call_is_refused_when_the_table_does_not_allow_it() -> None:
    events = discarded(first_trick_friend_allowed=False)
    given(events).when(call(0, "first_trick")).refused("bad_friend_call")


def test_a_none_call_plays_alone_and_everyone_knows_it() -> None:
    given(discarded()).when(call(0, "none")).then(FriendCalled(seat=0, call="none"))
    state = given(run(discarded(), call(0, "none"))).state
    assert isinstance(state, Playing) and state.friend is None and state.friend_known


def test_the_friend_is_called_after_the_discard() -> None:
    given(won()).when(call(0, "QH")).refused("wrong_phase")


def test_only_the_declarer_calls_the_friend() -> None:
    given(discarded()).when(call(2, "QH")).refused("not_your_turn")


def test_the_friend_call_starts_play_with_the_declarer_to_lead() -> None:
    state = given(run(discarded(), call(0, "QH"))).state
    assert isinstance(state, Playing)
    assert state.leader == 0 and state.to_act == 0 and not state.tricks


def test_a_trump_change_then_a_call_is_the_order() -> None:
    events = run(discarded("15 H"), change_trump(0, "S"), call(0, "QH"))
    state = given(events).state
    assert isinstance(state, Playing) and (state.points, state.trump) == (17, "S")


def test_where_the_declarer_always_plays_alone_none_is_the_only_call() -> None:
    dealt = deal(
        "AS KS QS JS TS AH KH QH JH TH",
        "9S 8S 7S AD KD QD JD TD 9D 8D",
        "JK 9H 8H 7H AC KC QC JC TC 9C",
        kitty="8C 7C 7D", ruleset=rules("mighty-3-short"),
    )
    events = run(auction_to(dealt, 0, "13 H"), discard(0, "8C 7C 7D"))
    given(events).when(call(0, "AD")).refused("bad_friend_call")
    given(events).when(call(0, "first_trick")).refused("bad_friend_call")
    given(events).when(call(0, "none")).then(FriendCalled(seat=0, call="none"))


# ---------------------------------------------------------------- 20 NT advice (§4.4)


def test_with_a_20_no_trump_contract_the_declarer_may_name_a_suit_for_the_friend_to_lead() -> None:
    given(discarded("20 NT")).when(call(0, "QH", lead_suit="D")).then(
        FriendCalled(seat=0, call="card", card="QH", lead_suit="D", holder=1))
    state = given(run(discarded("20 NT"), call(0, "QH", lead_suit="D"))).state
    assert isinstance(state, Playing) and state.lead_suit == "D"


def test_a_20_no_trump_contract_reached_by_a_trump_change_allows_the_advice() -> None:
    events = run(discarded("19 H"), change_trump(0, "NT"))
    given(events).when(call(0, "QH", lead_suit="S")).accepted()


def test_the_lead_advice_is_refused_below_20_no_trump() -> None:
    given(discarded("20 H")).when(call(0, "QH", lead_suit="D")).refused("bad_friend_call")
    given(discarded("19 NT")).when(call(0, "QH", lead_suit="D")).refused("bad_friend_call")


def test_the_lead_advice_is_not_enforced() -> None:
    events = run(discarded("20 NT"), call(0, "QH", lead_suit="D"))
    # seat 0 wins the first trick; its Ripper lead then forces out the Joker and seat 1, the
    # friend, wins with the king of clubs and leads a spade, not the advised diamond
    events = play_cards(events, "AH QH 9H 6H 3H", "3C KC JC 9C JK")
    state = given(events).state
    assert isinstance(state, Playing) and state.to_act == 1 and state.lead_suit == "D"
    given(events).when(play(1, "9S")).accepted()


def test_a_list_of_friend_calls_in_a_one_pack_variant_is_malformed() -> None:
    command = CallFriend(seat=0, friend=("QH", "first_trick"))
    given(discarded()).when(command).refused("malformed_command")

"""mighty-3's kitty (docs/rules/mighty.md §7, docs/hand-files.md): the declarer turns up 5 kitty
cards, keeps 3 and discards 3; then each other player, clockwise from the declarer's
left, takes one of the cards left and discards one (the one just taken included)."""

from __future__ import annotations

import random

from bench.domain import play_random_hand
from domain.mighty.cards import points_of
from domain.mighty.commands import Discard, Exchange
from domain.mighty.events import CardsDiscarded, HandEvent, KittyExchanged, KittyTaken
from domain.mighty.legal import legal_commands
from domain.mighty.state import Exchange as ExchangeState
from domain.mighty.state import Finished, Playing
from domain.mighty.views import audit_view, seat_view, spectator_view
from tests.unit.helpers import auction_to, call, cards, change_trump, deal, given, rules, run

# 16 cards each, 5 in the kitty: the whole 53-card pack.
HANDS = (
    "AS KS QS JS TS 9S AH KH QH JH AD KD QD AC KC QC",
    "8S 7S 6S 5S TH 9H 8H 7H JD TD 9D 8D JC TC 9C 8C",
    "4S 3S 2S 6H 5H 4H 3H 2H 7D 6D 5D 4D 7C 6C 5C 4C",
)
KITTY = "JK 3D 2D 3C 2C"


def auction_won() -> list[HandEvent]:
    dealt = deal(*HANDS, kitty=KITTY, ruleset=rules("mighty-3"))
    return auction_to(dealt, 0, "10 S")


def discarded() -> list[HandEvent]:
    return run(auction_won(), Discard(seat=0, cards=cards("QC KC 2C"), take=cards("JK 3D 2C")))


def test_in_mighty_3_the_kitty_is_turned_up_but_not_taken_into_the_declarers_hand() -> None:
    events = auction_won()
    assert events[-1] == KittyTaken(seat=0, cards=cards(KITTY), shown=True, into_hand=False)
    state = given(events).state
    assert isinstance(state, ExchangeState) and len(state.hands[0]) == 16
    assert state.kitty_left == cards(KITTY)


def test_in_mighty_3_the_declarer_keeps_three_kitty_cards_and_discards_three() -> None:
    given(auction_won()).when(
        Discard(seat=0, cards=cards("QC KC 2C"), take=cards("JK 3D 2C"))
    ).then(CardsDiscarded(seat=0, cards=cards("QC KC 2C"), taken=cards("JK 3D 2C")))
    state = given(discarded()).state
    assert isinstance(state, ExchangeState)
    assert len(state.hands[0]) == 16 and {"JK", "3D"} <= set(state.hands[0])
    assert state.kitty_left == cards("2D 3C") and state.exchanger == 1


def test_in_mighty_3_a_discard_without_the_kept_kitty_cards_is_a_bad_discard() -> None:
    given(auction_won()).when(Discard(seat=0, cards=cards("QC KC AC"))).refused("bad_discard")


def test_in_mighty_3_keeping_a_card_that_is_not_in_the_kitty_is_a_bad_discard() -> None:
    command = Discard(seat=0, cards=cards("QC KC AC"), take=cards("JK 3D 8S"))
    given(auction_won()).when(command).refused("bad_discard")


def test_in_mighty_3_the_others_exchange_clockwise_from_the_declarers_left() -> None:
    events = run(discarded(), Exchange(seat=1, take="3C", discard="8S"))
    assert events[-1] == KittyExchanged(seat=1, take="3C", discard="8S")
    state = given(events).state
    assert isinstance(state, ExchangeState) and state.exchanger == 2
    assert "3C" in state.hands[1] and "8S" not in state.hands[1]
    done = given(run(events, Exchange(seat=2, take="2D", discard="2D"))).state
    assert isinstance(done, ExchangeState) and done.exchanger is None and done.kitty_left == ()
    assert done.exchanges == ((1, "3C", "8S"), (2, "2D", "2D"))


def test_in_mighty_3_an_exchange_out_of_turn_is_not_your_turn() -> None:
    given(discarded()).when(Exchange(seat=2, take="3C", discard="4S")).refused("not_your_turn")
    given(auction_won()).when(Exchange(seat=1, take="3C", discard="8S")).refused("not_your_turn")


def test_in_mighty_3_taking_a_card_not_left_in_the_kitty_is_a_bad_discard() -> None:
    given(discarded()).when(Exchange(seat=1, take="JK", discard="8S")).refused("bad_discard")


def test_in_mighty_3_discarding_a_card_not_held_is_a_bad_discard() -> None:
    given(discarded()).when(Exchange(seat=1, take="3C", discard="4S")).refused("bad_discard")


def test_in_mighty_3_a_trump_change_or_call_before_every_exchange_is_not_your_turn() -> None:
    events = run(discarded(), Exchange(seat=1, take="3C", discard="8S"))
    given(events).when(change_trump(0, "NT")).refused("not_your_turn")
    given(events).when(call(0, "none")).refused("not_your_turn")


def test_in_mighty_3_the_declarer_changes_trump_and_calls_none_after_the_exchanges() -> None:
    events = run(discarded(), Exchange(seat=1, take="3C", discard="8S"),
                 Exchange(seat=2, take="2D", discard="4S"), change_trump(0, "NT"), call(0, "none"))
    state = given(events).state
    assert isinstance(state, Playing) and state.points == 11 and state.to_act == 0


def test_exchange_commands_are_only_for_mighty_3() -> None:
    dealt = deal("AS KS QS JS TS AH KH AD KD AC", "9S 8S 7S QH JH TH QD JD KC QC",
                 "6S 5S 4S 9H 8H 7H TD 9D JC TC", "3S 2S 6H 5H 4H 8D 7D 6D 9C 8C",
                 "3H 2H 5D 4D 3D 2D 7C 6C 5C 4C", kitty="JK 3C 2C")
    events = run(auction_to(dealt, 0, "13 H"), Discard(seat=0, cards=cards("JK 3C 2C")))
    given(events).when(Exchange(seat=1, take="JK", discard="9S")).refused("wrong_phase")


def test_in_mighty_3_legal_commands_list_each_take_and_discard_of_the_seat_to_exchange() -> None:
    state = given(discarded()).state
    listed = legal_commands(state, 1)
    assert len(listed) == 2 * 17  # two kitty cards left, each with 16 + 1 cards to discard
    assert all(isinstance(c, Exchange) and c.take in ("2D", "3C") for c in listed)
    assert legal_commands(state, 2) == [] and legal_commands(state, 0) == []
    first = legal_commands(given(auction_won()).state, 0)
    assert len(first) == 10 * 969  # C(5,3) kitty choices x C(19,3) discards


def test_in_mighty_3_a_seat_sees_its_own_exchange_and_nobody_elses_discard() -> None:
    events = run(discarded(), Exchange(seat=1, take="3C", discard="8S"))
    state = given(events).state
    assert seat_view(state, 1).own_exchange == ("3C", "8S")
    for view in (seat_view(state, 0), seat_view(state, 2), spectator_view(state)):
        assert view.own_exchange is None and "8S" not in str(view)


def test_in_mighty_3_every_players_discards_count_for_that_players_side() -> None:
    rng = random.Random(4)
    finished = 0
    while finished < 5:
        state, _ = play_random_hand(rng, rules("mighty-3"))
        if not isinstance(state, Finished):
            continue
        finished += 1
        exchanged = [discard for _, _, discard in state.exchanges]
        side = state.taken[state.declarer] + points_of(state.discards)
        assert state.scored.declarer_side_points == side
        defenders = sum(t for s, t in enumerate(state.taken) if s != state.declarer)
        assert side + defenders + points_of(exchanged) == 20
        assert audit_view(state).exchanges == state.exchanges and len(state.exchanges) == 2

"""docs/rules/mighty.md §5: following suit, the first trick, the Joker, the Ripper, the winner."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from domain.mighty.events import CardPlayed, HandDealt, HandEvent, TrickWon
from domain.mighty.play import joker_has_power, lead_calls_joker, legal_plays, ripper, trick_winner
from domain.mighty.state import Playing
from tests.unit.helpers import (
    STANDARD_HANDS,
    STANDARD_KITTY,
    deal,
    given,
    play,
    play_cards,
    ready_to_play,
    rules,
    standard_deal,
)

# Seat 0 declares 13 H, keeps the Ripper and discards 4C 2C KD:
#   0: AS KS QS JS TS AH KH AD AC 3C      1: 9S 8S 7S QH JH TH QD JD KC QC
#   2: 6S 5S 4S 9H 8H 7H TD 9D JC TC      3: 3S 2S 6H 5H 4H 8D 7D 6D 9C 8C
#   4: JK 3H 2H 5D 4D 3D 2D 7C 6C 5C


def standard_play(**options: Any) -> list[HandEvent]:
    return ready_to_play(standard_deal(rules(**options)), discards="4C 2C KD")


def after(*tricks: str, **options: Any) -> list[HandEvent]:
    return play_cards(standard_play(**options), *tricks)


def playing(events: list[HandEvent]) -> Playing:
    state = given(events).state
    assert isinstance(state, Playing)
    return state


# Seat 4 trumps the first trick and leads the next.
SEAT_4_WINS_FIRST = "KS 9S 6S 3S 2H"
# Seat 0 wins the first trick with the ace of diamonds; the Joker falls, powerless.
JOKER_FALLS_FIRST = "AD QD TD 8D JK"

# ---------------------------------------------------------------- following suit


def test_a_player_holding_the_led_suit_must_follow_it() -> None:
    events = play_cards(standard_play(), "KS")
    given(events).when(play(1, "QH")).refused("must_follow_suit")
    given(events).when(play(1, "9S")).accepted()


def test_a_player_without_the_led_suit_may_play_any_card() -> None:
    events = play_cards(standard_play(), "KS 9S 6S 3S")
    given(events).when(play(4, "5D")).accepted()
    given(events).when(play(4, "2H")).accepted()


def test_the_mighty_may_be_played_instead_of_following_suit() -> None:
    events = after(SEAT_4_WINS_FIRST, "JK/D")
    given(events).when(play(0, "AS")).accepted()
    given(events).when(play(0, "QS")).refused("must_follow_suit")


def test_the_joker_may_be_played_instead_of_following_suit() -> None:
    events = play_cards(standard_play(), "AD QD TD 8D")
    given(events).when(play(4, "JK")).accepted()
    given(events).when(play(4, "3H")).refused("must_follow_suit")


def test_the_mighty_counts_as_a_card_of_its_own_suit_so_its_holder_may_not_play_a_third_card() -> None:
    # seat 1 holds the Mighty as its only spade, and the Joker
    events = ready_to_play(mighty_alone_deal(), discards="4C 2C 9S")
    events = play_cards(events, "KS")
    given(events).when(play(1, "AS")).accepted()
    given(events).when(play(1, "JK")).accepted()
    given(events).when(play(1, "JH")).refused("must_follow_suit")
    given(events).when(play(1, "KD")).refused("must_follow_suit")


def test_when_the_mighty_leads_its_suit_is_the_led_suit() -> None:
    events = play_cards(standard_play(), "AS")
    assert playing(events).led_suit == "S"
    given(events).when(play(1, "QH")).refused("must_follow_suit")
    given(events).when(play(1, "7S")).accepted()


def test_with_spades_trump_the_ace_of_spades_is_an_ordinary_spade_and_must_follow_suit_rules() -> None:
    events = ready_to_play(mighty_alone_deal(), contract="13 S", discards="4C 2C 9S")
    events = play_cards(events, "AH")
    given(events).when(play(1, "AS")).refused("must_follow_suit")
    given(events).when(play(1, "TH")).accepted()


def test_with_spades_trump_the_ace_of_diamonds_is_the_mighty_and_may_be_played_any_time() -> None:
    events = ready_to_play(mighty_alone_deal(), declarer=1, contract="13 S", discards="KC QC JC")
    events = play_cards(events, "JH 9H 6H 3H")  # seat 1 leads hearts; seat 0 holds hearts
    given(events).when(play(0, "AD")).accepted()
    given(events).when(play(0, "AC")).refused("must_follow_suit")


# ---------------------------------------------------------------- the first trick


def test_the_declarer_leads_the_first_trick() -> None:
    state = playing(standard_play())
    assert state.to_act == 0 and state.leader == 0
    given(standard_play()).when(play(1, "9S")).refused("not_your_turn")


def test_the_first_trick_may_not_be_led_with_a_trump() -> None:
    given(standard_play()).when(play(0, "AH")).refused("illegal_first_lead")


def test_the_first_trick_may_not_be_led_with_the_ripper() -> None:
    given(standard_play()).when(play(0, "3C")).refused("illegal_first_lead")


def test_the_first_trick_may_not_be_led_with_the_joker() -> None:
    dealt = deal(
        "JK AS KS QS JS TS AH KH AD AC",
        *STANDARD_HANDS[1:4],
        "KD 3H 2H 5D 4D 3D 2D 7C 6C 5C",
        kitty=STANDARD_KITTY,
    )
    events = ready_to_play(dealt, discards="4C 2C 3C")
    given(events).when(play(0, "JK", suit="S")).refused("illegal_first_lead")


def test_the_mighty_may_lead_the_first_trick() -> None:
    given(standard_play()).when(play(0, "AS")).accepted()


def test_a_leader_holding_nothing_but_trumps_the_joker_and_the_ripper_may_lead_any_of_them() -> None:
    events = ready_to_play(joker_and_trumps_deal(), discards="2S 2D 6H", friend="AS")
    for command in (play(0, "AH"), play(0, "JK", suit="D"), play(0, "3C")):
        given(events).when(command).accepted()
    assert len(legal_plays(playing(events), 0)) == 8 + 4 + 1


def test_a_ripper_led_to_the_first_trick_calls_nothing() -> None:
    events = ready_to_play(ripper_and_trumps_deal(), discards="2S 2D 6H", friend="AS")
    given(events).when(play(0, "3C")).then(CardPlayed(seat=0, card="3C"))
    events = play_cards(events, "3C 2C 7S AC")
    given(events).when(play(4, "4C")).accepted()  # the Joker's holder is not forced


# ---------------------------------------------------------------- the Joker lead


def test_whoever_leads_the_joker_must_name_a_suit() -> None:
    given(after(SEAT_4_WINS_FIRST)).when(play(4, "JK")).refused("joker_suit_required")


def test_a_joker_lead_names_the_suit_the_others_must_follow() -> None:
    events = after(SEAT_4_WINS_FIRST)
    given(events).when(play(4, "JK", suit="D")).then(CardPlayed(seat=4, card="JK", suit="D"))
    events = play_cards(events, "JK/D")
    assert playing(events).led_suit == "D"
    given(events).when(play(0, "QS")).refused("must_follow_suit")
    given(events).when(play(0, "AD")).accepted()


def test_every_player_after_the_first_follower_must_follow_the_named_suit_too() -> None:
    events = after(SEAT_4_WINS_FIRST, "JK/D AD")
    given(events).when(play(1, "QH")).refused("must_follow_suit")
    given(events).when(play(1, "JD")).accepted()


# ---------------------------------------------------------------- Joker power


def test_the_joker_wins_a_trick_in_the_middle_of_the_hand() -> None:
    events = after(SEAT_4_WINS_FIRST, "JK/D AD QD TD 8D")
    assert trick(events, 1).winner == 4


def test_the_mighty_beats_the_joker() -> None:
    events = after(SEAT_4_WINS_FIRST, "JK/D AS QD TD 8D")
    assert trick(events, 1).winner == 0


def test_the_joker_has_no_power_in_the_first_trick() -> None:
    events = after(JOKER_FALLS_FIRST)
    assert trick(events, 0).winner == 0


def test_the_joker_beats_a_trump_when_it_has_power() -> None:
    events = play_cards(full_hand_line(), *LINE[:7], "AD QH TC 8C JK")
    assert trick(events, 7).winner == 4


def test_the_joker_has_no_power_on_the_last_trick() -> None:
    events = play_cards(full_hand_line(), *LINE)
    assert trick(events, 9).cards == ("AC", "QH", "9H", "6H", "JK")
    assert trick(events, 9).winner == 1


def test_the_joker_has_no_power_in_a_trick_led_by_the_ripper_with_a_joker_call() -> None:
    events = ready_to_play(mighty_alone_deal(), discards="4C 2C 9S")
    events = play_cards(events, "AC KC TC 8C 7C", "3C JK 9C 8D 6C")
    assert trick(events, 1).winner == 2


# ---------------------------------------------------------------- the joker call


def test_leading_the_ripper_calls_the_joker_which_its_holder_must_play() -> None:
    events = play_cards(standard_play(), "AC KC JC 9C 7C")
    given(events).when(play(0, "3C")).then(  # seat 4 holds the Joker: the call has effect
        CardPlayed(seat=0, card="3C", joker_call=True, joker_call_effective=True))
    events = play_cards(events, "3C QC TC 8C")
    given(events).when(play(4, "6C")).refused("must_play_joker")
    given(events).when(play(4, "3H")).refused("must_play_joker")
    given(events).when(play(4, "JK")).accepted()


def test_the_joker_holder_may_answer_the_call_with_the_mighty_instead() -> None:
    events = ready_to_play(mighty_alone_deal(), discards="4C 2C 9S")
    events = play_cards(events, "AC KC TC 8C 7C", "3C")
    given(events).when(play(1, "QC")).refused("must_play_joker")
    given(events).when(play(1, "AS")).accepted()
    given(events).when(play(1, "JK")).accepted()


def test_the_call_has_no_effect_when_the_joker_is_already_played() -> None:
    events = after(JOKER_FALLS_FIRST, "3C")
    assert not playing(events).joker_called
    assert events[-1] == CardPlayed(seat=0, card="3C", joker_call=True, joker_call_effective=False)


def test_the_call_has_no_effect_when_the_leader_holds_the_joker() -> None:
    events = ready_to_play(joker_and_trumps_deal(), discards="2S 2D 6H", friend="AS")
    events = play_cards(events, "AH 5H 3H TD QC", "3C")
    state = playing(events)
    assert state.joker_call_made and not state.joker_called
    assert events[-1] == CardPlayed(seat=0, card="3C", joker_call=True, joker_call_effective=False)


def test_the_ripper_calls_nothing_when_the_joker_was_discarded() -> None:
    dealt = deal(*STANDARD_HANDS[:4], "2C 3H 2H 5D 4D 3D 2D 7C 6C 5C", kitty="4C 3C JK")
    events = ready_to_play(dealt, discards="4C JK KD")
    events = play_cards(events, "AC KC JC 9C 7C", "3C")
    state = playing(events)
    assert state.joker_call_made and not state.joker_called


def test_with_joker_call_declared_the_leader_chooses_to_call() -> None:
    events = after("AC KC JC 9C 7C", joker_call="declared")
    given(events).when(play(0, "3C", joker_call=True)).then(
        CardPlayed(seat=0, card="3C", joker_call=True, joker_call_effective=True))
    called = play_cards(events, "3C! QC TC 8C")
    given(called).when(play(4, "6C")).refused("must_play_joker")


def test_with_joker_call_declared_a_ripper_lead_without_the_call_forces_nothing() -> None:
    events = after("AC KC JC 9C 7C", joker_call="declared")
    given(events).when(play(0, "3C", joker_call=False)).then(CardPlayed(seat=0, card="3C"))
    quiet = play_cards(events, "3C? QC TC 8C")
    given(quiet).when(play(4, "6C")).accepted()


def test_with_joker_call_declared_the_joker_keeps_its_power_in_an_uncalled_ripper_trick() -> None:
    events = after("AC KC JC 9C 7C", "3C? QC TC 8C JK", joker_call="declared")
    assert trick(events, 1).winner == 4


def test_by_default_a_joker_call_flag_on_a_ripper_lead_is_not_needed() -> None:
    events = play_cards(standard_play(), "AC KC JC 9C 7C")
    assert lead_calls_joker(playing(events), "3C", None)
    assert not lead_calls_joker(playing(events), "AC", True)


def test_with_clubs_trump_the_three_of_spades_is_the_ripper() -> None:
    events = ready_to_play(clubs_trump_deal(), contract="13 C", discards="2S 2H 2D")
    assert ripper(playing(events)) == "3S"
    events = play_cards(events, "AH QH 9H 6H TH", "3S KS JS 6S")
    assert playing(events).joker_called
    given(events).when(play(4, "9S")).refused("must_play_joker")
    events = play_cards(events, "JK")
    assert trick(events, 1).winner == 1  # the Joker is powerless; king of spades


def test_with_clubs_trump_the_three_of_clubs_is_an_ordinary_trump() -> None:
    events = ready_to_play(clubs_trump_deal(), contract="13 C", discards="2S 2H 2D")
    state = playing(play_cards(events, "AH QH 9H 6H TH"))
    assert not lead_calls_joker(state, "3C", None)


# ---------------------------------------------------------------- the winner


def test_a_powerless_joker_that_led_wins_when_nobody_follows_the_named_suit_or_trumps() -> None:
    events = ready_to_play(joker_lead_deal(), contract="13 S", discards="AH 3S 2S")
    events = play_cards(events, "JK/S KH KD AC")
    assert trick(events, 0).winner == 0


def test_the_mighty_wins_over_a_powerless_joker_lead() -> None:
    events = ready_to_play(joker_lead_deal(), contract="13 S", discards="AH 3S 2S")
    events = play_cards(events, "JK/S AD KD AC")  # with spades trump, AD is the Mighty
    assert trick(events, 0).winner == 1


@pytest.mark.parametrize(("variant", "last"), [("mighty-5", 9), ("mighty-4", 11), ("mighty-3-short", 9)])
def test_the_last_trick_is_the_hand_sizes_trick_in_every_variant(variant: str, last: int) -> None:
    state = playing(standard_play())
    dummy = TrickWon(trick=0, leader=0, cards=(), winner=0, points=0)
    state = replace(state, rules=rules(variant))
    assert joker_has_power(replace(state, tricks=(dummy,) * (last - 1)))
    assert not joker_has_power(replace(state, tricks=(dummy,) * last))


def test_the_winner_of_a_trick_leads_the_next() -> None:
    state = playing(after(SEAT_4_WINS_FIRST))
    assert state.leader == 4 and state.to_act == 4


@pytest.mark.parametrize(
    ("why", "trump", "number", "led", "cards", "winner", "call"),
    [
        ("the Mighty wins", "H", 3, "D", "5D AS JK KD AH", 1, False),
        ("the Mighty wins even over a powered joker that led", "H", 3, "D", "JK 2D AS 3H 4D", 2, False),
        ("with spades trump the Mighty is AD", "S", 3, "C", "2C AS AD 3C 4C", 2, False),
        ("with spades trump AS is just a trump", "S", 3, "D", "JK AS 2D 3D 4D", 0, False),
        ("a powered joker beats trumps", "H", 3, "C", "2C AH JK 3C 4C", 2, False),
        ("a joker call strips the joker's power", "H", 3, "C", "3C JK 2C 4C 5C", 4, True),
        ("the joker has no power in the first trick", "H", 0, "C", "2C JK 3C 4C 5C", 4, False),
        ("the joker has no power in the last trick", "H", 9, "C", "2C JK AH 4C 5C", 2, False),
        ("the highest trump wins", "H", 3, "C", "AC 2H KC 3H 4C", 3, False),
        ("the highest card of the led suit wins", "H", 3, "D", "5D 9D AC KD 2S", 3, False),
        ("in no trump only the led suit counts", "NT", 3, "S", "2S AH KS QS 3S", 2, False),
        ("a powerless joker lead is beaten by the named suit", "H", 0, "D", "JK 2D AC KS 3D", 4, False),
        ("a powerless joker lead is beaten by a trump", "H", 9, "D", "JK 5C 2H 4C 3C", 2, False),
        ("a powerless joker lead nobody followed wins", "H", 9, "D", "JK 5C 4C 3S 3C", 0, False),
    ],
)
def test_the_winner_of_a_trick(why: str, trump: str, number: int, led: str, cards: str,
                               winner: int, call: bool) -> None:
    state = playing(standard_play())
    played = tuple(cards.split())
    dummy = TrickWon(trick=0, leader=0, cards=(), winner=0, points=0)
    state = replace(state, trump=trump, tricks=(dummy,) * number, leader=0, led_suit=led,
                    joker_call_made=call)
    assert joker_has_power(state) == (number not in (0, 9) and not call), why
    assert trick_winner(state, played) == winner, why


# ---------------------------------------------------------------- deals and lines


def trick(events: list[HandEvent], number: int) -> TrickWon:
    return [e for e in events if isinstance(e, TrickWon)][number]


def mighty_alone_deal() -> HandDealt:
    """Seat 1 holds the Mighty as its only spade, and the Joker."""
    return deal(
        "KS QS JS TS 9S AH KH QH AD AC",
        "AS JK JH TH KD QD JD KC QC JC",
        "8S 7S 6S 9H 8H 7H TD 9D TC 9C",
        "5S 4S 3S 6H 5H 4H 8D 7D 6D 8C",
        "2S 3H 2H 5D 4D 3D 2D 7C 6C 5C",
        kitty="4C 3C 2C",
    )


def joker_and_trumps_deal() -> HandDealt:
    """After discarding, seat 0 holds the Joker, the Ripper and eight hearts (trump)."""
    return deal(
        "JK AH KH QH JH TH 9H 8H 7H 6H",
        "AS KS QS JS TS 9S 8S 5H 4H AD",
        "7S 6S 5S 4S 3S 3H 2H KD QD JD",
        "TD 9D 8D 7D 6D 5D 4D 3D AC KC",
        "QC JC TC 9C 8C 7C 6C 5C 4C 2C",
        kitty="3C 2S 2D",
    )


def ripper_and_trumps_deal() -> HandDealt:
    """After discarding, seat 0 holds the Ripper and nine hearts; seat 4 the Joker and clubs."""
    return deal(
        "5H AH KH QH JH TH 9H 8H 7H 6H",
        "AS KS QS JS TS 9S 8S 2C 4H AD",
        "7S 6S 5S 4S 3S 3H 2H KD QD JD",
        "TD 9D 8D 7D 6D 5D 4D 3D AC KC",
        "QC JC TC 9C 8C 7C 6C 5C 4C JK",
        kitty="3C 2S 2D",
    )


def clubs_trump_deal() -> HandDealt:
    return deal(
        "3S AC KC QC JC TC 9C AH KH AD",
        "AS KS QS QH JH KD QD JD 8C 7C",
        "JS TS 9H 8H 7H TD 9D 8D 6C 5C",
        "6S 5S 6H 5H 4H 7D 6D 5D 4C 3C",
        "JK 9S 8S 7S 4S TH 3H 4D 3D 2C",
        kitty="2S 2H 2D",
    )


def joker_lead_deal() -> HandDealt:
    """mighty-4: seat 0 holds the Joker and every spade; nobody else can follow spades."""
    return deal(
        "JK AS KS QS JS TS 9S 8S 7S 6S 5S 4S",
        "KH QH JH TH 9H 8H 7H 6H 5H 4H 3H AD",
        "KD QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D",
        "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C",
        kitty="3S 2S AH", ruleset=rules("mighty-4"),
    )


# A whole hand from the standard deal (seat 0 declares 13 H alone, discards the kitty):
# seat 4 keeps the Joker to the last trick, where it cannot win.
LINE = (
    "AS 9S 6S 3S 5D", "KS 8S 5S 2S 4D", "QS 7S 4S 8D 3D", "JS QD TD 7D 2D", "TS JD 9D 6D 7C",
    "AH TH 7H 4H 2H", "KH JH 8H 5H 3H", "AD QC TC 8C 5C", "KD KC JC 9C 6C", "AC QH 9H 6H JK",
)


def full_hand_line() -> list[HandEvent]:
    return ready_to_play(standard_deal(), discards=STANDARD_KITTY)

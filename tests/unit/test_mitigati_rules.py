"""Mitigati's rules, one test per behaviour (docs/rules/mitigati.md, docs/hand-files.md, "Mitigati files").

Deals and states come from ``mitigati_helpers``: dealer 0, so R (the dealer's right) is
seat 2 and L is seat 1; every turn passes to the right: 2, 1, 0.
"""

from __future__ import annotations

import msgspec
import pytest
from msgspec.structs import replace

from domain.errors import RuleError
from domain.mitigati.cards import DECK, HONOURS, POINTS, STRENGTH, TOTAL_POINTS
from domain.mitigati.decider import decide, evolve
from domain.mitigati.declarations import best_honour_part, declarations_of, tarocchi
from domain.mitigati.events import (
    DealAbandoned,
    Declaration,
    FoolCardGiven,
    FoolCardOwed,
    HandScored,
    PacketsDealt,
    SessionEnded,
    TrickWon,
)
from domain.mitigati.play import trick_winner
from domain.mitigati.rules import right_of
from domain.mitigati.state import (
    Abandoned,
    Bargaining,
    Declaring,
    Discarding,
    Finished,
    FoolRecord,
    Playing,
)
from tests.unit.mitigati_helpers import (
    apply,
    bargain,
    dealt,
    declare,
    declared,
    discard,
    passes,
    play,
    playing,
    through_bargaining,
)


def refused(state: object, command: object) -> str:
    with pytest.raises(RuleError) as error:
        decide(state, command)  # type: ignore[arg-type]
    return error.value.code


# ---------------------------------------------------------------- cards and seats

def test_the_deck_has_78_cards_worth_129_points_so_par_is_43() -> None:
    assert len(DECK) == len(set(DECK)) == 78
    assert TOTAL_POINTS == 129 == 3 * 43
    assert [POINTS[c] for c in ("KD", "T20", "T1", "QS", "FOOL", "NC", "FB", "TC", "T21", "1D")] == [
        5, 5, 5, 4, 4, 3, 2, 1, 1, 1]


def test_round_suits_rank_their_pips_reversed_and_long_suits_do_not() -> None:
    def order(suit: str) -> list[str]:
        return sorted((c for c in DECK if c[1:] == suit), key=STRENGTH.__getitem__, reverse=True)
    assert order("B") == ["KB", "QB", "NB", "FB", "TB", "9B", "8B", "7B", "6B", "5B", "4B", "3B", "2B", "1B"]
    assert order("D") == ["KD", "QD", "ND", "FD", "1D", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD"]


def test_the_angel_t20_is_the_highest_trump_then_t21_then_t19_down_to_t1() -> None:
    trumps = sorted((c for c in DECK if c.startswith("T") and c[1:].isdigit()),
                    key=STRENGTH.__getitem__, reverse=True)
    assert trumps[:3] == ["T20", "T21", "T19"] and trumps[-1] == "T1"


def test_turns_pass_to_the_right() -> None:
    assert [right_of(s) for s in (0, 1, 2)] == [2, 0, 1]


# ---------------------------------------------------------------- bargaining

def test_rounds_one_and_two_are_dealt_when_the_hand_starts_and_r_speaks_first() -> None:
    state = dealt()
    assert isinstance(state, Bargaining) and state.session == 1 and state.to_act == 2
    assert [len(h) for h in state.hands] == [10, 10, 10]


def test_three_passes_end_the_session_and_deal_the_next_round() -> None:
    state = dealt()
    events = decide(apply(state, *passes(2, 1)), bargain(0, "pass"))
    assert SessionEnded(session=1, how="passes") in events and PacketsDealt(round=2) in events
    after = apply(state, *passes(2, 1, 0))
    assert isinstance(after, Bargaining) and after.session == 2 and after.to_act == 2
    assert [len(h) for h in after.hands] == [15, 15, 15]


def test_continue_ends_the_session_at_once_even_with_offers_standing() -> None:
    state = apply(dealt(), bargain(2, "pay", 3), bargain(1, "sell", 10), bargain(0, "pass"))
    after = apply(state, bargain(2, "continue"))
    assert isinstance(after, Bargaining) and after.session == 2 and after.payer is None


def test_after_the_third_session_the_dealer_holds_28_cards_and_discards() -> None:
    state = through_bargaining()
    assert isinstance(state, Discarding)
    assert [len(h) for h in state.hands] == [28, 25, 25]


def test_a_payer_may_only_raise_and_a_seller_only_lower() -> None:
    state = apply(dealt(), bargain(2, "pay", 3), bargain(1, "sell", 10), bargain(0, "pass"))
    assert refused(state, bargain(2, "pay", 3)) == "bad_bargain"
    state = apply(state, bargain(2, "pay", 4))
    assert refused(state, bargain(1, "sell", 10)) == "bad_bargain"
    assert isinstance(apply(state, bargain(1, "sell", 9)), Bargaining)


def test_nobody_may_take_a_role_another_seat_holds_or_switch_roles() -> None:
    state = apply(dealt(), bargain(2, "pay", 3))
    assert refused(state, bargain(1, "pay", 5)) == "bad_bargain"
    state = apply(state, bargain(1, "sell", 8), bargain(0, "pass"))
    assert refused(state, bargain(2, "sell", 7)) == "bad_bargain"  # the payer switching


def test_an_offer_above_the_ask_or_an_ask_below_the_offer_is_refused() -> None:
    state = apply(dealt(), bargain(2, "pay", 3), bargain(1, "sell", 10), bargain(0, "pass"))
    assert refused(state, bargain(2, "pay", 11)) == "bad_bargain"
    state = apply(dealt(), bargain(2, "pay", 6))
    assert refused(state, bargain(1, "sell", 5)) == "bad_bargain"


def test_an_amount_below_one_is_refused() -> None:
    assert refused(dealt(), bargain(2, "pay", 0)) == "bad_bargain"
    assert refused(dealt(), bargain(2, "sell", -4)) == "bad_bargain"


def test_when_the_offer_meets_the_ask_the_third_player_answers_at_once() -> None:
    # R sells 8, L pays 8: the third player is the dealer (0), though R would be next
    state = apply(dealt(), bargain(2, "sell", 8), bargain(1, "pay", 8))
    assert isinstance(state, Bargaining) and state.to_act == 0
    assert refused(state, bargain(0, "pay", 9)) == "bad_bargain"
    assert refused(state, bargain(0, "sell", 8)) == "bad_bargain"
    assert refused(state, bargain(2, "pass")) == "not_your_turn"


def test_the_third_players_pass_abandons_the_deal_and_the_payer_pays_the_seller() -> None:
    state = apply(dealt(), bargain(2, "sell", 8), bargain(1, "pay", 8), bargain(0, "pass"))
    assert isinstance(state, Abandoned)
    assert (state.payer, state.seller, state.amount, state.scores) == (1, 2, 8, (0, -8, 8))
    assert refused(state, play(2, "KS")) == "wrong_phase"
    assert refused(state, bargain(2, "pass")) == "wrong_phase"


def test_the_third_players_continue_refuses_the_agreement_and_dealing_resumes() -> None:
    state = apply(dealt(), bargain(2, "sell", 8), bargain(1, "pay", 8))
    events = decide(state, bargain(0, "continue"))
    assert SessionEnded(session=1, how="refused") in events
    assert not any(isinstance(e, DealAbandoned) for e in events)


def test_unmatched_offers_lapse_when_three_pass_in_a_row() -> None:
    state = apply(dealt(), bargain(2, "pay", 2), *passes(1, 0, 2))
    assert isinstance(state, Bargaining) and state.session == 2 and state.offer is None


def test_an_open_session_blocks_the_discard_the_declarations_and_the_play() -> None:
    state = dealt()
    for command in (discard("8C 9C TC"), declare(2), play(2, "KS")):
        assert refused(state, command) == "wrong_phase"


def test_a_bargain_out_of_turn_is_not_your_turn() -> None:
    assert refused(dealt(), bargain(0, "pass")) == "not_your_turn"


# ---------------------------------------------------------------- discard

def test_the_dealer_discards_three_different_cards_that_it_holds() -> None:
    state = through_bargaining()
    assert refused(state, discard("8C 9C")) == "bad_discard"
    assert refused(state, discard("8C 8C 9C")) == "bad_discard"
    assert refused(state, discard("8C 9C KS")) == "bad_discard"
    assert refused(state, discard("8C 9C TC", seat=2)) == "not_your_turn"
    after = apply(state, discard("8C 9C TC"))
    assert isinstance(after, Declaring) and len(after.hands[0]) == 25 and after.to_act == 2


@pytest.mark.parametrize("honour", ["KC", "T20", "T1"])
def test_an_honour_may_not_be_discarded(honour: str) -> None:
    assert refused(through_bargaining(), discard(f"8C 9C {honour}")) == "bad_discard"


def test_other_trumps_may_be_discarded() -> None:
    assert isinstance(apply(through_bargaining(), discard("T2 T3 T21")), Declaring)


def test_the_dealers_view_of_the_discard_offers_every_card_but_the_honours() -> None:
    from domain.mitigati.views import seat_view

    state = through_bargaining()
    view = seat_view(state, 0)
    assert view.discard_count == 3 and view.hand is not None
    assert view.discard_from == tuple(c for c in view.hand if c not in HONOURS)
    assert "T2" in view.discard_from and not set(HONOURS) & set(view.discard_from)
    assert isinstance(seat_view(state, 1).discard_from, type(msgspec.UNSET))  # not the dealer's step


# ---------------------------------------------------------------- declarations

TRUMPS = [f"T{n}" for n in range(1, 22)]


def test_tarocchi_is_ten_plus_one_per_trump_beyond_ten() -> None:
    assert tarocchi(TRUMPS[:10]) == (10, tuple(TRUMPS[:10]))
    assert tarocchi([*TRUMPS[:13], "FOOL", "KS"]) == (13, tuple(TRUMPS[:13]))
    assert tarocchi(TRUMPS[:8] + ["FOOL"]) is None


def test_the_fool_counts_as_a_trump_only_as_the_tenth() -> None:
    assert tarocchi(["FOOL", *TRUMPS[12:21]]) == (10, (*TRUMPS[12:21], "FOOL"))


def test_all_seven_honours_declare_kings_twenty_and_mitigati_fifteen() -> None:
    assert best_honour_part(HONOURS) == {"kings": 20, "mitigati": 15}
    with pytest.raises(RuleError, match="best set"):
        declarations_of(0, HONOURS, ("kings",))


def test_four_kings_score_twenty_plus_five_per_further_honour() -> None:
    assert best_honour_part(["KD", "KC", "KB", "KS"]) == {"kings": 20}
    assert best_honour_part(["KD", "KC", "KB", "KS", "T20", "FOOL"]) == {"kings": 30}


def test_mitigati_scores_fifteen_plus_five_per_further_honour() -> None:
    assert best_honour_part(["T20", "T1", "FOOL"]) == {"mitigati": 15}
    assert best_honour_part(["T20", "T1", "FOOL", "KB", "KS"]) == {"mitigati": 25}


def test_four_honours_score_ten_plus_five_per_honour_beyond_four() -> None:
    assert best_honour_part(["T20", "T1", "KB", "KS"]) == {"honours": 10}
    assert best_honour_part(["T20", "FOOL", "KD", "KB", "KS"]) == {"honours": 15}
    assert best_honour_part(["T20", "T1", "KB"]) == {}


def test_an_honour_part_other_than_the_best_set_is_refused() -> None:
    mitigati_and_a_king = ("T20", "T1", "FOOL", "KB")
    for names in (("honours",), ("kings",), ("mitigati", "honours")):
        with pytest.raises(RuleError) as error:
            declarations_of(1, mitigati_and_a_king, names)
        assert error.value.code == "bad_declaration"
    assert [d.value for d in declarations_of(1, mitigati_and_a_king, ("mitigati",))] == [20]
    assert declarations_of(1, mitigati_and_a_king, ()) == ()


def test_a_combination_named_twice_or_not_held_is_a_bad_declaration() -> None:
    state = apply(through_bargaining(), discard("8C 9C TC"))
    assert refused(state, declare(2, "tarocchi")) == "bad_declaration"  # R holds no trump
    state = apply(state, declare(2), declare(1))
    assert refused(state, declare(0, "tarocchi", "tarocchi")) == "bad_declaration"


def test_each_seat_declares_once_from_r_and_then_r_leads() -> None:
    state = apply(through_bargaining(), discard("8C 9C TC"))
    assert refused(state, declare(0)) == "not_your_turn"
    state = apply(state, declare(2), declare(1))
    assert isinstance(state, Declaring) and state.to_act == 0
    state = apply(state, declare(0, "tarocchi"))
    assert isinstance(state, Playing) and state.leader == state.to_act == 2
    assert [(d.seat, d.name, d.value) for d in state.declarations] == [(0, "tarocchi", 21)]


def test_the_dealer_declares_on_the_hand_after_the_discard() -> None:
    # discarding three trumps leaves the dealer 18: tarocchi is worth 18, not 21
    state = apply(through_bargaining(), discard("T2 T3 T4"), declare(2), declare(1), declare(0, "tarocchi"))
    assert isinstance(state, Playing) and state.declarations[0].value == 18


# ---------------------------------------------------------------- play

def test_a_seat_must_follow_the_suit_it_holds() -> None:
    state = playing(["T1 KC", "1S FD", "KS 1B"], leader=2, trick="9S")
    assert refused(state, play(1, "FD")) == "must_follow_suit"
    assert isinstance(apply(state, play(1, "1S")), Playing)


def test_a_seat_void_in_the_suit_must_play_a_trump() -> None:
    state = playing(["T1 FB", "1C FD", "KS 1B"], leader=1, trick="1C")
    assert refused(state, play(0, "FB")) == "must_trump"
    assert isinstance(apply(state, play(0, "T1")), Playing)


def test_a_seat_void_in_the_suit_and_in_trumps_may_play_any_card() -> None:
    state = playing(["KD FB", "1C FD", "KS 1B"], leader=1, trick="1C")
    assert isinstance(apply(state, play(0, "FB")), Playing)


def test_there_is_no_obligation_to_overtrump() -> None:
    # leader 2 plays 5S, seat 1 trumps with T9; seat 0, void in swords, may undertrump
    state = playing(["T2 T21 1D", "T9 1C", "5S KS"], leader=2, trick="5S T9")
    after = apply(state, play(0, "T2"))
    assert isinstance(after, Playing) and after.tricks[-1].winner == 1


def test_the_fool_may_always_be_played_instead() -> None:
    state = playing(["FOOL 1S T3", "1C FD", "KS 1B"], leader=2, trick="5S 1C")
    assert isinstance(apply(state, play(0, "FOOL")), Playing)


def test_the_checks_come_in_order_card_not_in_hand_follow_then_trump() -> None:
    state = playing(["T1 FB", "1C FD", "KS 1B"], leader=1, trick="1C")
    assert refused(state, play(0, "QB")) == "card_not_in_hand"
    state = playing(["T1 2C FB", "1C FD", "KS 1B"], leader=1, trick="1C")
    assert refused(state, play(0, "FB")) == "must_follow_suit"  # follow before trump


def test_after_the_fool_is_led_the_second_card_sets_the_suit() -> None:
    state = playing(["T1 2C FB", "FOOL FD", "KS 1B"], leader=1, trick="FOOL")
    after = apply(state, play(0, "2C"))  # the second player may play any card
    assert isinstance(after, Playing)
    assert refused(after, play(2, "T1")) == "card_not_in_hand"
    after2 = playing(["T1 2C FB", "FOOL FD", "KS 1C"], leader=1, trick="FOOL 2C")
    assert refused(after2, play(2, "KS")) == "must_follow_suit"


def test_the_highest_trump_wins_else_the_highest_card_of_the_suit_to_follow() -> None:
    assert trick_winner(2, ("1D", "TD", "KS")) == 2  # coins: the ace beats the ten
    assert trick_winner(2, ("1D", "T1", "KD")) == 1
    assert trick_winner(0, ("T21", "T20", "T19")) == 2  # the Angel is played second: seat 2
    assert trick_winner(1, ("5B", "KD", "4B")) == 1


def test_the_fool_never_wins_a_trick() -> None:
    assert trick_winner(1, ("FOOL", "1D", "TD")) == 0  # 1D (seat 0) beats TD (seat 2)
    assert trick_winner(0, ("2S", "FOOL", "1S")) == 0
    assert trick_winner(0, ("1S", "2S", "FOOL")) == 2


# ---------------------------------------------------------------- the Fool's settlement

def test_the_fools_player_gives_the_winner_its_earliest_won_one_point_card() -> None:
    # seat 1 won KD FD 2D 3D earlier: the jack is worth 2, so 2D is its earliest 1-point card
    state = playing(["KS", "FOOL", "5S"], leader=2, trick="5S", won=["", "KD FD 2D 3D", ""])
    state = apply(state, play(1, "FOOL"), play(0, "KS"))
    assert isinstance(state, Playing)
    assert state.fool == FoolRecord(seat=1, trick=0, to=0, card="2D", paid_in=0)
    assert state.won[1] == ("KD", "FD", "3D", "FOOL") and state.won[0] == ("5S", "KS", "2D")


def test_a_fool_player_with_no_one_point_card_owes_it_and_pays_when_able() -> None:
    state = playing(["KS 1D", "FOOL 9S", "5S TD"], leader=2, trick="5S")
    events = decide(apply(state, play(1, "FOOL")), play(0, "KS"))
    assert FoolCardOwed(seat=1, trick=0, to=0) in events
    # the next trick, led by the winner (0): seat 1 wins nothing, the debt stays
    state = playing(["1D", "9S", "TD"], leader=0, trick="", won=["5S KS", "FOOL", ""],
                    fool=FoolRecord(seat=1, trick=0, to=0), tricks_done=1)
    state = apply(state, play(0, "1D"), play(2, "TD"), play(1, "9S"))
    # coins led: seat 0's 1D beats TD; seat 1 played a sword and won nothing: still owed
    assert isinstance(state, Playing) and state.fool == FoolRecord(seat=1, trick=0, to=0)
    state = playing(["2S", "9S", "TD"], leader=1, won=["5S KS", "FOOL", ""],
                    fool=FoolRecord(seat=1, trick=0, to=0), tricks_done=1)
    state = apply(state, play(1, "9S"), play(0, "2S"), play(2, "TD"))
    assert isinstance(state, Playing)
    assert state.fool == FoolRecord(seat=1, trick=0, to=0, card="9S", paid_in=1)
    assert "9S" in state.won[0] and state.won[1] == ("FOOL", "2S", "TD")


def test_a_debt_unpaid_after_the_last_trick_is_paid_with_the_fool_itself() -> None:
    state = playing(["KS", "1D", "5S"], leader=2, won=["T1 T2 T3", "FOOL", "T4 T5 T6"],
                    fool=FoolRecord(seat=1, trick=3, to=0), tricks_done=24)
    events = decide(apply(state, play(2, "5S"), play(1, "1D")), play(0, "KS"))
    assert isinstance(events[1], TrickWon) and events[1].winner == 0
    assert FoolCardGiven(seat=1, trick=3, to=0, card="FOOL", paid_in=None) in events
    final = apply(state, play(2, "5S"), play(1, "1D"), play(0, "KS"))
    assert isinstance(final, Finished) and "FOOL" in final.won[0] and final.won[1] == ()


def test_the_fool_played_to_the_last_trick_by_a_seat_with_nothing_goes_to_the_winner() -> None:
    state = playing(["KS", "FOOL", "5S"], leader=2, won=["T1 T2", "", "T4 T5"], tricks_done=24)
    events = decide(apply(state, play(2, "5S"), play(1, "FOOL")), play(0, "KS"))
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["CardPlayed", "TrickWon", "FoolCardOwed", "FoolCardGiven", "HandScored"]


# ---------------------------------------------------------------- scoring

def test_scores_are_points_less_43_plus_declarations_paid_by_each_opponent() -> None:
    # a finished hand of the property tests' kind is checked there; here the arithmetic:
    state = playing(["KS", "1D", "5S"], leader=2, won=["T1 T2 T3", "FOOL", "T4 T5 T6"],
                    fool=FoolRecord(seat=1, trick=3, to=0, card="T9", paid_in=4), tricks_done=24)

    state = replace(state, declarations=(Declaration(seat=2, name="honours", value=10),))
    events = decide(apply(state, play(2, "5S"), play(1, "1D")), play(0, "KS"))
    scored = events[-1]
    assert isinstance(scored, HandScored)
    # won: seat 0 T1 T2 T3 + 5S 1D KS = 5+1+1+1+1+5 = 14, plus the discards 8C 9C TC = 3
    # seat 1: FOOL = 4; seat 2: T4 T5 T6 = 3 (a built state: not the whole deck)
    assert scored.points == (17, 4, 3)
    assert scored.scores == (17 - 43 - 10, 4 - 43 - 10, 3 - 43 + 20)


def test_the_discards_count_for_the_dealer() -> None:
    state = declared(discards="8C 9C TC")
    assert isinstance(state, Playing) and state.discards == ("8C", "9C", "TC")


def test_evolve_starts_a_hand_from_its_deal_event_only() -> None:
    with pytest.raises(AssertionError):
        evolve(None, PacketsDealt(round=2))

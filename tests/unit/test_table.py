"""The table aggregate: seats, start, deals and their commitment, dealer rotation (§2),
the first bidder (§3) across hands, redeals, and the deal revealed when a hand ends."""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec
import pytest

from domain.codec import decode_event, encode_event
from domain.errors import RuleError
from domain.mighty.commands import Bid, HandCommand
from domain.mighty.decider import evolve as hand_evolve
from domain.mighty.events import HandDealt, HandPassedOut, HandScored, MisdealClaimed
from domain.mighty.game import TableCreated
from domain.mighty.state import Bidding, Finished, Redeal
from domain.mighty.views import seat_view, spectator_view
from domain.table import (
    CloseTable,
    CreateTable,
    DealHand,
    DealRevealed,
    JoinSeat,
    LeaveSeat,
    PlayerJoined,
    PlayerLeft,
    PlayerResigned,
    Resign,
    StartTable,
    Submission,
    TableClosed,
    TableEvent,
    TableStarted,
    TableState,
    deal_commitment,
    decide,
    evolve,
    initial_state,
)
from tests.unit.helpers import (
    STANDARD_HANDS,
    STANDARD_KITTY,
    bid,
    call,
    cards,
    claim_misdeal,
    discard,
    pass_,
    play_token,
)
from tests.unit.test_play import LINE

PLAYERS = ("ann", "bob", "cy", "dee", "eve")
ORDER = tuple(c for hand in STANDARD_HANDS for c in cards(hand)) + cards(STANDARD_KITTY)
SALT = "pepper-0001"


class Table:
    """A table driven through ``decide``/``evolve``; every refusal fails the test."""

    def __init__(self) -> None:
        self.state = initial_state("t1")
        self.events: list[TableEvent] = []

    def send(self, command: Any, player: str | None = None) -> list[TableEvent]:
        new = decide(self.state, Submission(command, player))
        for event in new:
            self.state = evolve(self.state, event)
        self.events.extend(new)
        return new

    def refuse(self, command: Any, player: str | None, code: str) -> None:
        before = self.state
        with pytest.raises(RuleError) as caught:
            decide(self.state, Submission(command, player))
        assert caught.value.code == code, caught.value.message
        assert self.state == before

    def hand_commands(self, *commands: HandCommand) -> None:
        for command in commands:
            self.send(command, PLAYERS[command.seat])


def seated(**options: Any) -> Table:
    table = Table()
    table.send(CreateTable(options=options, name="test"), "ann")
    for seat, player in enumerate(PLAYERS):
        table.send(JoinSeat(seat=seat), player)
    return table


def started(first_dealer: int = 0, **options: Any) -> Table:
    table = seated(**options)
    table.send(StartTable(first_dealer=first_dealer), "ann")
    return table


def deal_standard(table: Table, salt: str = SALT) -> HandDealt:
    new = table.send(DealHand(order=ORDER, salt=salt))
    assert isinstance(new[0], HandDealt)
    return new[0]


def play_standard_hand(table: Table, friend: str = "QH") -> HandScored:
    """The standard deal: seat 0 declares 13 H after everyone else passes, keeps the whole
    hand of LINE (seat 1 takes the last trick) and calls ``friend``."""
    dealt = deal_standard(table)
    n = len(PLAYERS)
    table.hand_commands(*(bid(s, "13 H") if s == 0 else pass_(s)
                          for s in ((dealt.first_bidder + i) % n for i in range(n))))
    table.hand_commands(discard(0, STANDARD_KITTY), call(0, friend))
    for token in " ".join(LINE).split():
        hand = table.state.hand
        assert hand is not None and not isinstance(hand, Finished)
        table.hand_commands(play_token(hand.to_act, token))  # type: ignore[union-attr]
    scored = [e for e in table.events if isinstance(e, HandScored)][-1]
    return scored


def pass_out(table: Table) -> None:
    dealt = deal_standard(table)
    n = len(PLAYERS)
    for _ in range(2):
        table.hand_commands(*(pass_((dealt.first_bidder + i) % n) for i in range(n)))


# ---------------------------------------------------------------- creating and seating


def test_a_table_is_created_with_its_rule_set_and_fingerprint() -> None:
    table = Table()
    [created] = table.send(CreateTable(variant="mighty-5", options={"score": "pagat"}), "ann")
    assert isinstance(created, TableCreated) and created.rules.score == "pagat"
    assert created.rules_fingerprint == created.rules.fingerprint()
    assert table.state.status == "open" and table.state.seats == (None,) * 5


@pytest.mark.parametrize(
    ("variant", "options", "code"),
    [("mighty-9", {}, "unknown_variant"), ("mighty-5", {"giruda": 1}, "unknown_option"),
     ("mighty-5", {"score": "double"}, "bad_option")],
    # (every variant is playable since mighty-6/7/8: no variant_not_playable case is left)
)
def test_a_table_with_unknown_or_unplayable_rules_is_refused(variant: str, options: dict[str, Any], code: str) -> None:
    Table().refuse(CreateTable(variant=variant, options=options), "ann", code)


def test_a_table_is_created_once() -> None:
    seated().refuse(CreateTable(), "bob", "table_exists")


def test_commands_to_a_table_that_does_not_exist_are_refused() -> None:
    Table().refuse(JoinSeat(seat=0), "ann", "unknown_table")


def test_players_take_free_seats_one_each() -> None:
    table = Table()
    table.send(CreateTable(), "ann")
    assert table.send(JoinSeat(seat=2), "ann") == [PlayerJoined(seat=2, player="ann")]
    table.refuse(JoinSeat(seat=2), "bob", "seat_taken")
    table.refuse(JoinSeat(seat=3), "ann", "already_seated")
    table.refuse(JoinSeat(seat=5), "bob", "malformed_command")
    table.refuse(JoinSeat(seat=1), None, "player_required")


def test_a_player_leaves_only_their_own_seat() -> None:
    table = seated()
    table.refuse(LeaveSeat(seat=1), "ann", "not_your_seat")
    assert table.send(LeaveSeat(seat=1), "bob") == [PlayerLeft(seat=1, player="bob")]
    assert table.state.seats[1] is None


def test_the_table_starts_when_every_seat_is_taken_by_a_seated_player() -> None:
    table = Table()
    table.send(CreateTable(), "ann")
    table.send(JoinSeat(seat=0), "ann")
    table.refuse(StartTable(first_dealer=0), "ann", "table_not_full")
    table = seated()
    table.refuse(StartTable(first_dealer=0), "zed", "not_seated")
    assert table.send(StartTable(first_dealer=3), "cy") == [TableStarted(first_dealer=3, started_by="cy")]
    assert table.state.status == "playing" and table.state.dealer == 3


def test_seats_are_fixed_once_the_table_starts() -> None:
    table = started()
    table.refuse(LeaveSeat(seat=0), "ann", "wrong_phase")


# ---------------------------------------------------------------- the deal


def test_only_the_service_deals_and_only_when_a_hand_is_awaited() -> None:
    seated().refuse(DealHand(order=ORDER, salt=SALT), None, "wrong_phase")
    table = started()
    table.refuse(DealHand(order=ORDER, salt=SALT), "ann", "not_allowed")
    deal_standard(table)
    table.refuse(DealHand(order=ORDER, salt=SALT), None, "wrong_phase")


def test_a_deal_must_order_the_variants_deck_each_card_once() -> None:
    table = started()
    table.refuse(DealHand(order=ORDER[:-1], salt=SALT), None, "malformed_command")
    table.refuse(DealHand(order=(*ORDER[:-1], "AS"), salt=SALT), None, "malformed_command")


def test_the_deal_splits_the_order_into_hands_in_seat_order_then_the_kitty() -> None:
    dealt = deal_standard(started(first_dealer=2))
    assert dealt.hands == tuple(cards(h) for h in STANDARD_HANDS)
    assert dealt.kitty == cards(STANDARD_KITTY)
    assert dealt.dealer == 2 and dealt.hand_no == 0


def test_the_deal_records_a_commitment_to_the_order_and_a_secret_salt_before_bidding() -> None:
    dealt = deal_standard(started())
    expected = hashlib.sha256((" ".join(ORDER) + "|" + SALT).encode()).hexdigest()
    assert dealt.commitment == deal_commitment(ORDER, SALT) == expected
    assert deal_commitment(ORDER, "other salt") != expected


def test_no_view_shows_the_salt_before_the_hand_ends() -> None:
    table = started()
    deal_standard(table)
    hand = table.state.hand
    assert hand is not None
    for view in [*(seat_view(hand, s) for s in range(5)), spectator_view(hand)]:
        assert SALT not in msgspec.json.encode(view).decode()


def test_the_deal_is_revealed_when_the_hand_ends_and_matches_its_commitment() -> None:
    table = started()
    play_standard_hand(table)
    [dealt] = [e for e in table.events if isinstance(e, HandDealt)]
    [revealed] = [e for e in table.events if isinstance(e, DealRevealed)]
    assert table.events[-2:] == [table.events[-2], revealed]
    assert isinstance(table.events[-2], HandScored)
    assert revealed.order == ORDER and revealed.salt == SALT and revealed.hand_no == 0
    assert revealed.commitment == dealt.commitment == deal_commitment(revealed.order, revealed.salt)
    assert table.state.salt is None


@pytest.mark.parametrize("how", ["passed_out", "misdeal"])
def test_the_deal_is_revealed_after_a_redeal_too(how: str) -> None:
    table = started(misdeal_claim=True)
    if how == "passed_out":
        pass_out(table)
        assert any(isinstance(e, HandPassedOut) for e in table.events)
    else:
        deal_standard(table)
        table.hand_commands(claim_misdeal(4))
        assert any(isinstance(e, MisdealClaimed) for e in table.events)
    assert isinstance(table.events[-1], DealRevealed)
    assert isinstance(table.state.hand, Redeal) and table.state.awaiting_deal


# ---------------------------------------------------------------- dealer rotation (§2)


def test_the_first_dealer_is_the_one_the_service_drew() -> None:
    assert deal_standard(started(first_dealer=4)).dealer == 4


def test_the_friend_of_the_previous_hand_deals_next() -> None:
    table = started()
    assert play_standard_hand(table, friend="QH").friend == 1
    assert deal_standard(table).dealer == 1


def test_the_declarer_deals_next_when_there_was_no_friend() -> None:
    table = started(first_dealer=3)
    assert play_standard_hand(table, friend="none").friend is None
    assert deal_standard(table).dealer == 0


def test_with_next_dealer_left_the_deal_passes_clockwise() -> None:
    table = started(first_dealer=4, next_dealer="left")
    play_standard_hand(table, friend="QH")
    assert deal_standard(table).dealer == 0


def test_the_same_dealer_deals_again_after_two_all_pass_rounds() -> None:
    table = started(first_dealer=2)
    pass_out(table)
    dealt = deal_standard(table)
    assert dealt.dealer == 2 and dealt.hand_no == 1


def test_the_same_dealer_deals_again_after_a_misdeal_claim() -> None:
    table = started(first_dealer=2, misdeal_claim=True)
    deal_standard(table)
    table.hand_commands(claim_misdeal(3))
    dealt = deal_standard(table)
    assert dealt.dealer == 2 and dealt.hand_no == 1


# ---------------------------------------------------------------- the first bidder (§3)


def test_the_dealer_bids_first_by_default() -> None:
    table = started(first_dealer=3)
    assert deal_standard(table).first_bidder == 3


def test_with_first_bidder_left_of_dealer_the_next_seat_bids_first() -> None:
    table = started(first_dealer=4, first_bidder="left_of_dealer")
    assert deal_standard(table).first_bidder == 0


def test_with_first_bidder_previous_declarer_the_dealer_bids_first_in_the_first_hand_then_the_last_declarer() -> None:
    table = started(first_dealer=3, first_bidder="previous_declarer")
    assert deal_standard(table).first_bidder == 3
    table = started(first_dealer=3, first_bidder="previous_declarer")
    play_standard_hand(table, friend="QH")  # seat 0 declares; seat 1, the friend, deals next
    dealt = deal_standard(table)
    assert (dealt.dealer, dealt.first_bidder) == (1, 0)


def test_previous_declarer_survives_a_redeal() -> None:
    table = started(first_dealer=3, first_bidder="previous_declarer")
    play_standard_hand(table, friend="QH")
    pass_out(table)
    assert deal_standard(table).first_bidder == 0


# ---------------------------------------------------------------- playing at the table


def test_a_player_acts_only_for_their_own_seat_and_the_service_for_any() -> None:
    table = started()
    deal_standard(table)
    table.refuse(bid(0, "13 H"), "bob", "not_your_seat")
    table.send(bid(0, "13 H"), None)
    assert isinstance(table.state.hand, Bidding) and table.state.hand.to_act == 1


def test_a_hand_command_before_any_deal_is_in_the_wrong_phase() -> None:
    started().refuse(bid(0, "13 H"), "ann", "wrong_phase")


def test_the_totals_add_up_every_hands_scores() -> None:
    table = started()
    first = play_standard_hand(table, friend="QH")
    assert table.state.totals == first.scores == (2, 1, -1, -1, -1)
    assert table.state.hands_scored == 1 and table.state.previous_declarer == 0


def test_the_hand_inside_the_table_is_the_hand_deciders_state() -> None:
    table = started()
    play_standard_hand(table)
    hand_events = [e for e in table.events if not isinstance(
        e, TableCreated | PlayerJoined | TableStarted | DealRevealed)]
    state = None
    for event in hand_events:
        state = hand_evolve(state, event)  # type: ignore[arg-type]
    assert state == table.state.hand


# ---------------------------------------------------------------- resign and close


def test_a_resignation_closes_the_table() -> None:
    table = started()
    table.refuse(Resign(seat=1), "ann", "not_your_seat")
    assert table.send(Resign(seat=1), "bob") == [PlayerResigned(seat=1, player="bob"),
                                                   TableClosed(reason="resigned")]
    table.refuse(JoinSeat(seat=0), "zed", "table_closed")


@pytest.mark.parametrize("close", ["resign", "service"])
def test_a_hand_cut_short_by_the_table_closing_has_its_deal_revealed(close: str) -> None:
    table = started()
    dealt = deal_standard(table)
    table.send(Bid(seat=0, points=13, trump="H"), "ann")  # the hand is under way
    events = table.send(Resign(seat=2), "cy") if close == "resign" else table.send(CloseTable(reason="idle"))
    [revealed] = [e for e in events if isinstance(e, DealRevealed)]
    assert isinstance(events[-1], TableClosed) and events.index(revealed) == len(events) - 2
    assert revealed.order == ORDER and revealed.salt == SALT and revealed.hand_no == dealt.hand_no
    assert revealed.commitment == dealt.commitment == deal_commitment(revealed.order, revealed.salt)
    assert table.state.salt is None


def test_a_table_closed_between_hands_reveals_nothing_twice() -> None:
    table = started()
    play_standard_hand(table)  # its deal is revealed as it ends
    assert not any(isinstance(e, DealRevealed) for e in table.send(CloseTable(reason="idle")))


def test_only_the_service_closes_a_started_table() -> None:
    table = started()
    table.refuse(CloseTable(), "ann", "table_started")  # ann created it: before the start she could
    table.send(CloseTable(reason="idle"))
    assert table.state.status == "closed"


def test_table_events_round_trip_through_the_codec() -> None:
    table = started()
    play_standard_hand(table)
    state: TableState = initial_state("t1")
    for event in table.events:
        state = evolve(state, decode_event(encode_event(event)))
    assert state == table.state

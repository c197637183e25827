"""Bidding (docs/rules/mighty.md §3): bids, passes, the all-pass rounds, misdeal claims."""

from __future__ import annotations

from domain.errors import (
    AlreadyPassed,
    BidOutOfRange,
    BidTooLow,
    MisdealNotAllowed,
    NotYourTurn,
)
from domain.mighty.cards import is_joker, mighties
from domain.mighty.commands import Bid, ClaimMisdeal, Pass
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
from domain.mighty.state import AuctionEntry, Bidding

# §3 option suit_ranks_break_ties: at equal points S < C < D < H < NT.
_TIE_RANK = {"S": 0, "C": 1, "D": 2, "H": 3, "NT": 4}


def outbids(state: Bidding, points: int, trump: str) -> bool:
    """Higher means more points, or the same points in NT over a suit (§3)."""
    if state.standing is None:
        return True
    _, standing_points, standing_trump = state.standing
    if points != standing_points:
        return points > standing_points
    if state.rules.suit_ranks_break_ties:
        return _TIE_RANK[trump] > _TIE_RANK[standing_trump]
    return trump == "NT" and standing_trump != "NT"


def _check_turn(state: Bidding, seat: int) -> None:
    if state.rules.pass_is_final and state.passed[seat]:
        raise AlreadyPassed(f"Seat {seat} has passed and may not bid again in this hand.")
    if seat != state.to_act:
        raise NotYourTurn(f"It is seat {state.to_act}'s turn to bid, not seat {seat}'s.")


def decide_bid(state: Bidding, cmd: Bid) -> list[HandEvent]:
    _check_turn(state, cmd.seat)
    spec = state.rules.spec
    if not spec.min_bid <= cmd.points <= spec.max_bid:
        raise BidOutOfRange(f"A bid is {spec.min_bid} to {spec.max_bid} points; {cmd.points} is not.")
    if not outbids(state, cmd.points, cmd.trump):
        assert state.standing is not None
        _, points, trump = state.standing
        raise BidTooLow(
            f"{cmd.points} {cmd.trump} does not beat the standing bid of {points} {trump}."
        )
    events: list[HandEvent] = [BidMade(seat=cmd.seat, points=cmd.points, trump=cmd.trump)]
    passed = state.passed
    if state.rules.pass_is_final and all(p for s, p in enumerate(passed) if s != cmd.seat):
        events += _auction_won(state, (cmd.seat, cmd.points, cmd.trump))
    return events


def decide_pass(state: Bidding, cmd: Pass) -> list[HandEvent]:
    _check_turn(state, cmd.seat)
    events: list[HandEvent] = [Passed(seat=cmd.seat)]
    n = state.players
    if state.rules.pass_is_final:
        passed = [p or s == cmd.seat for s, p in enumerate(state.passed)]
        everyone_else = state.standing is not None and all(
            p for s, p in enumerate(passed) if s != state.standing[0]
        )
        everyone = all(passed)
    else:
        since = state.passes_since_bid + 1
        everyone_else = state.standing is not None and since == n - 1
        everyone = state.standing is None and since == n
    if everyone_else:
        assert state.standing is not None
        events += _auction_won(state, state.standing)
    elif everyone:
        events.append(BiddingReopened(round=2) if state.round == 1 else HandPassedOut())
    return events


def _auction_won(state: Bidding, standing: AuctionEntry) -> list[HandEvent]:
    seat, points, trump = standing
    return [
        AuctionWon(declarer=seat, points=points, trump=trump),
        KittyTaken(seat=seat, cards=state.kitty, shown=state.rules.kitty_shown,
                   into_hand=state.rules.spec.kitty_keep is None),
    ]


def hand_worth_halves(hand: tuple[str, ...]) -> int:
    """§3 misdeal: Mighty 0, Joker -1, A K Q J +1, 10 +½ — in halves. Trump is not
    chosen yet, so the Mighty is the AS."""
    mighty = mighties("NT", 1) | mighties("NT", 2)
    worth = 0
    for card in hand:
        if card in mighty:
            continue
        if is_joker(card):
            worth -= 2
        elif card[0] in "AKQJ":
            worth += 2
        elif card[0] == "T":
            worth += 1
    return worth


def decide_misdeal(state: Bidding, cmd: ClaimMisdeal) -> list[HandEvent]:
    seat = cmd.seat
    if not state.rules.misdeal_claim:
        raise MisdealNotAllowed("This table's rules do not allow misdeal claims.")
    if state.acted[seat] or state.round != 1:
        raise MisdealNotAllowed(f"Seat {seat} has already bid or passed; a misdeal is claimed before that.")
    if hand_worth_halves(state.hands[seat]) > 1:
        raise MisdealNotAllowed(f"Seat {seat}'s hand is worth more than ½; it is not a misdeal.")
    return [MisdealClaimed(seat=seat)]


def next_bidder(state: Bidding, after: int, passed: tuple[bool, ...]) -> int:
    n = state.players
    for step in range(1, n + 1):
        seat = (after + step) % n
        if not (state.rules.pass_is_final and passed[seat]):
            return seat
    return after


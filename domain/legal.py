"""``legal_commands(state, seat)``: exactly the commands the rules allow a seat now.

Bots, clients and the property tests all read this one list; ``decide`` accepts every
command in it (a property test holds it to that).
"""

from __future__ import annotations

from itertools import combinations

from domain.bidding import hand_worth_halves, outbids
from domain.cards import TRUMPS
from domain.commands import (
    Bid,
    CallFriend,
    ChangeTrump,
    ClaimMisdeal,
    Discard,
    HandCommand,
    Pass,
)
from domain.commands import (
    Exchange as ExchangeCommand,
)
from domain.exchange import friend_call_options, raised_contract
from domain.play import legal_plays
from domain.state import Bidding, Exchange, HandState, Playing, to_act


def legal_commands(state: HandState, seat: int) -> list[HandCommand]:
    if isinstance(state, Playing):
        return list(legal_plays(state, seat))
    if isinstance(state, Bidding):
        return _bidding_commands(state, seat)
    if isinstance(state, Exchange) and seat == to_act(state):
        if state.exchanger is not None:
            return _kitty_exchanges(state, seat)
        return _exchange_commands(state, seat)
    return []


def _bidding_commands(state: Bidding, seat: int) -> list[HandCommand]:
    commands: list[HandCommand] = []
    rules = state.rules
    if (rules.misdeal_claim and state.round == 1 and not state.acted[seat]
            and hand_worth_halves(state.hands[seat]) <= 1):
        commands.append(ClaimMisdeal(seat=seat))
    if seat != state.to_act:
        return commands
    commands.append(Pass(seat=seat))
    spec = rules.spec
    lowest = spec.min_bid if state.standing is None else state.standing[1]
    commands.extend(
        Bid(seat=seat, points=points, trump=trump)
        for points in range(lowest, spec.max_bid + 1)
        for trump in TRUMPS
        if outbids(state, points, trump)
    )
    return commands


def _exchange_commands(state: Exchange, seat: int) -> list[HandCommand]:
    if state.discards is None:
        return _discards(state, seat)
    commands: list[HandCommand] = []
    if not state.trump_changed:
        limit = state.rules.spec.max_bid
        commands.extend(
            ChangeTrump(seat=seat, trump=t) for t in TRUMPS
            if t != state.trump and raised_contract(state.points, state.trump, t) <= limit
        )
    advice: tuple[str | None, ...] = (None,)
    if (state.points, state.trump) == (state.rules.spec.max_bid, "NT"):
        advice = (None, "S", "H", "D", "C")
    commands.extend(
        CallFriend(seat=seat, friend=call, lead_suit=suit)
        for call in friend_call_options(state) for suit in advice
    )
    return commands


def _discards(state: Exchange, seat: int) -> list[HandCommand]:
    """Every set of cards the declarer may discard (and, in mighty-3, keep from the kitty)."""
    spec = state.rules.spec
    hand = state.hands[seat]
    if spec.kitty_keep is None:
        return [Discard(seat=seat, cards=cards) for cards in combinations(hand, spec.kitty_size)]
    return [
        Discard(seat=seat, cards=cards, take=take)
        for take in combinations(state.kitty_left, spec.kitty_keep)
        for cards in combinations(hand + take, spec.discard_count)
    ]


def _kitty_exchanges(state: Exchange, seat: int) -> list[HandCommand]:
    """mighty-3: take one kitty card left, discard any one card, the taken one included."""
    return [
        ExchangeCommand(seat=seat, take=take, discard=card)
        for take in state.kitty_left
        for card in (*state.hands[seat], take)
    ]

"""``legal_commands(state, seat)``: exactly the commands the rules allow a seat now.

Bots, clients and the property tests all read this one list; ``decide`` accepts every
command in it (a property test holds it to that).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations
from math import comb
from typing import overload

from domain.combinations import nth_combination  # re-exported: tests and callers read it here
from domain.mighty.bidding import hand_worth_halves, outbids
from domain.mighty.cards import TRUMPS
from domain.mighty.commands import (
    Bid,
    CallFriend,
    ChangeTrump,
    ClaimMisdeal,
    Discard,
    HandCommand,
    Pass,
)
from domain.mighty.commands import (
    Exchange as ExchangeCommand,
)
from domain.mighty.exchange import friend_call_options, raised_contract
from domain.mighty.play import legal_plays
from domain.mighty.state import Bidding, Exchange, HandState, Playing, to_act


def legal_commands(state: HandState, seat: int) -> Sequence[HandCommand]:
    """A list, except at the discard step: there a ``DiscardChoices``, a sequence that
    makes each set of cards only when asked (C(13, 3) = 286 sets with one pack, 100,947
    with two), so a bot that picks one pays for one."""
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


def _exchange_commands(state: Exchange, seat: int) -> Sequence[HandCommand]:
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


def _discards(state: Exchange, seat: int) -> Sequence[HandCommand]:
    """Every set of cards the declarer may discard (and, in mighty-3, keep from the kitty)."""
    spec = state.rules.spec
    if spec.kitty_keep is None:
        return DiscardChoices(seat, state.hands[seat], spec.kitty_size)
    return DiscardChoices(seat, state.hands[seat], spec.discard_count, state.kitty_left, spec.kitty_keep)


class DiscardChoices(Sequence[HandCommand]):
    """The discards a declarer may make, in the order ``itertools.combinations`` lists
    them: for each set ``take`` of ``keep`` cards from the kitty left (mighty-3; else
    none), each set of ``count`` cards of the hand plus ``take``. Indexing builds one
    ``Discard`` (unranking the combination); ``in`` checks a command without a search."""

    __slots__ = ("seat", "hand", "size", "_takes", "_per_take")

    def __init__(self, seat: int, hand: tuple[str, ...], count: int,
                 kitty_left: tuple[str, ...] = (), keep: int | None = None) -> None:
        self.seat, self.hand, self.size = seat, hand, count
        self._takes: list[tuple[str, ...] | None] = (
            [None] if keep is None else list(combinations(kitty_left, keep)))
        self._per_take = comb(len(hand) + (keep or 0), count)

    def __len__(self) -> int:
        return len(self._takes) * self._per_take

    @overload
    def __getitem__(self, index: int) -> HandCommand: ...
    @overload
    def __getitem__(self, index: slice) -> list[HandCommand]: ...
    def __getitem__(self, index: int | slice) -> HandCommand | list[HandCommand]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("discard choice out of range")
        take = self._takes[index // self._per_take]
        pool = self.hand if take is None else self.hand + take
        return Discard(seat=self.seat, cards=nth_combination(pool, self.size, index % self._per_take), take=take)

    def __iter__(self) -> Iterator[HandCommand]:
        for take in self._takes:
            pool = self.hand if take is None else self.hand + take
            for cards in combinations(pool, self.size):
                yield Discard(seat=self.seat, cards=cards, take=take)

    def __contains__(self, command: object) -> bool:
        if not isinstance(command, Discard) or command.seat != self.seat or command.take not in self._takes:
            return False
        pool = self.hand if command.take is None else self.hand + command.take
        return len(command.cards) == self.size and _in_order(command.cards, pool)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DiscardChoices | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:  # equal to a list of the same commands, so unhashable as lists are
        raise TypeError(f"unhashable type: {type(self).__name__!r}")

    def __repr__(self) -> str:
        return f"DiscardChoices(seat={self.seat}, {len(self)} choices)"


def _in_order(cards: tuple[str, ...], pool: tuple[str, ...]) -> bool:
    """Whether ``cards`` are distinct cards of ``pool``, in the pool's order (as
    ``combinations`` lists them). Cards of two packs are distinct strings (``AS#1``)."""
    at = -1
    for card in cards:
        try:
            at = pool.index(card, at + 1)
        except ValueError:
            return False
    return True


def _kitty_exchanges(state: Exchange, seat: int) -> list[HandCommand]:
    """mighty-3: take one kitty card left, discard any one card, the taken one included."""
    return [
        ExchangeCommand(seat=seat, take=take, discard=card)
        for take in state.kitty_left
        for card in (*state.hands[seat], take)
    ]

"""What a Mighty seat knows at its turn to play, gathered once from its view (or, inside
the expert's playouts, from the state, reading only what that seat could see).

A ``Spot`` is plain data: the beginner's rules of thumb read it, and it is cheap to build
from a state, since the playouts build one per card played.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, NamedTuple

from domain.mighty.cards import JOKERS, RANK_OF, SUIT_OF, SUITS, TRUMPS, mighties, rippers
from domain.mighty.commands import Play
from domain.mighty.play import joker_has_power
from domain.mighty.rules import VARIANTS, RuleSet
from domain.mighty.state import Playing
from domain.mighty.views import HandView

_DECKS: Final = {v.name: frozenset(v.deck) for v in VARIANTS.values()}
_MIGHTY: Final = {(t, v.name): mighties(t, v.packs) for t in TRUMPS for v in VARIANTS.values()}
_RIPPER: Final = {(t, v.name): rippers(t, v.ripper_rank, v.packs) for t in TRUMPS for v in VARIANTS.values()}


class Spot(NamedTuple):
    seat: int
    players: int
    hand: tuple[str, ...]
    options: Sequence[Play]
    trick: tuple[str, ...]
    leader: int
    led_suit: str | None
    trump: str
    trick_no: int
    tricks: int  # tricks in the hand
    declarer: int
    partners: frozenset[int]  # seats known to be on this seat's side
    opponents: frozenset[int]  # seats known to be against it
    unseen: frozenset[str]  # cards neither played, nor in this hand, nor known discards
    mighty: frozenset[str]
    rippers: frozenset[str]
    joker_power: bool  # jokers can win the current trick
    declared_calls: bool  # joker_call = declared: a Ripper lead says whether it calls


def sides(seat: int, players: int, declarer: int, revealed: Iterable[int], is_friend: bool,
          all_known: bool) -> tuple[frozenset[int], frozenset[int]]:
    """(partners, opponents) as the seat knows them: the declarer's side knows its
    revealed friends (a friend knows the declarer); a defender knows the declarer and the
    revealed friends, and its fellow defenders once every call is revealed."""
    others = frozenset(s for s in range(players) if s != seat)
    shown = frozenset(revealed) - {seat}
    if seat == declarer or is_friend:
        partners = shown | ({declarer} if seat != declarer else frozenset())
        return partners, others - partners
    opponents = shown | {declarer}
    return (others - opponents if all_known else frozenset()), opponents


def spot_from_view(rules: RuleSet, view: HandView) -> Spot:
    assert view.viewer is not None and view.hand is not None and view.contract is not None
    assert view.declarer is not None
    seat, trump = view.viewer, view.contract[1]
    played = [c for t in view.tricks for c in t.cards]
    trick = view.trick.cards if view.trick is not None else ()
    played.extend(trick)
    gone = set(played) | set(view.hand) | set(view.discards or ())
    if rules.spec.packs > 1:
        revealed = tuple(view.friends) if isinstance(view.friends, tuple) else ()
        is_friend = view.friend == seat
    else:
        revealed = (view.friend,) if view.friend_known and view.friend is not None else ()
        is_friend = view.friend == seat
    partners, opponents = sides(seat, len(view.hand_sizes), view.declarer, revealed, is_friend,
                                view.friend_known)
    trick_no = len(view.tricks)
    called = view.joker_call if isinstance(view.joker_call, bool) else bool(
        trick and trick_no and trick[0] in _RIPPER[trump, rules.variant])
    power = 0 < trick_no < rules.spec.hand_size - 1 and not (trick and called)
    return Spot(
        seat=seat, players=len(view.hand_sizes), hand=view.hand,
        options=[c for c in view.legal if isinstance(c, Play)], trick=trick,
        leader=view.trick.leader if view.trick is not None else seat,
        led_suit=view.led_suit, trump=trump, trick_no=trick_no, tricks=rules.spec.hand_size,
        declarer=view.declarer, partners=partners, opponents=opponents,
        unseen=_DECKS[rules.variant] - gone, mighty=_MIGHTY[trump, rules.variant],
        rippers=_RIPPER[trump, rules.variant], joker_power=power,
        declared_calls=rules.joker_call == "declared",
    )


def spot_from_state(state: Playing, seat: int, options: Sequence[Play]) -> Spot:
    """The same facts from a state, reading only what ``seat`` may see (§8)."""
    rules = state.rules
    played = [c for t in state.tricks for c in t.cards]
    played.extend(state.trick)
    hand = state.hands[seat]
    gone = set(played) | set(hand)
    if seat == state.declarer:
        gone.update(state.discards)
    is_friend = seat in state.friends and seat != state.declarer
    partners, opponents = sides(seat, state.players, state.declarer, state.revealed, is_friend,
                                state.friend_known)
    return Spot(
        seat=seat, players=state.players, hand=hand, options=options, trick=state.trick,
        leader=state.leader, led_suit=state.led_suit, trump=state.trump,
        trick_no=len(state.tricks), tricks=rules.spec.hand_size, declarer=state.declarer,
        partners=partners, opponents=opponents, unseen=_DECKS[rules.variant] - gone,
        mighty=_MIGHTY[state.trump, rules.variant], rippers=_RIPPER[state.trump, rules.variant],
        joker_power=joker_has_power(state), declared_calls=rules.joker_call == "declared",
    )


def winning_place(spot: Spot, cards: tuple[str, ...], led: str | None) -> int:
    """Which card of a (partial) trick wins it as it stands (§5's order)."""
    for i, card in enumerate(cards):
        if card in spot.mighty:
            return i
    if spot.joker_power:
        for i, card in enumerate(cards):
            if card in JOKERS:
                return i
    for suit in (spot.trump, led):
        best, best_rank = -1, 0
        for i, card in enumerate(cards):
            if SUIT_OF[card] == suit and RANK_OF[card] > best_rank:
                best, best_rank = i, RANK_OF[card]
        if best >= 0:
            return best
    return 0


def is_boss(spot: Spot, card: str) -> bool:
    """No unseen card of the suit ranks higher (the Mighty and jokers aside)."""
    suit, rank = SUIT_OF[card], RANK_OF[card]
    return suit is not None and not any(
        SUIT_OF[c] == suit and RANK_OF[c] > rank and c not in spot.mighty for c in spot.unseen)


def suit_lengths(hand: Iterable[str]) -> dict[str, int]:
    lengths = dict.fromkeys(SUITS, 0)
    for card in hand:
        suit = SUIT_OF[card]
        if suit is not None:
            lengths[suit] += 1
    return lengths

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
    gone: frozenset[str] | set[str]  # cards played, in this hand, or known discards
    variant: str
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
        gone=gone, variant=rules.variant, mighty=_MIGHTY[trump, rules.variant],
        rippers=_RIPPER[trump, rules.variant], joker_power=power,
        declared_calls=rules.joker_call == "declared",
    )


def spot_from_state(state: Playing, seat: int, options: Sequence[Play],
                    played: set[str] | None = None) -> Spot:
    """The same facts from a state, reading only what ``seat`` may see (§8); ``played``,
    when the caller keeps it, is every card played so far."""
    rules = state.rules
    if played is None:
        played = {c for t in state.tricks for c in t.cards}
        played.update(state.trick)
    hand = state.hands[seat]
    gone = played | set(hand)
    if seat == state.declarer:
        gone.update(state.discards)
    is_friend = seat in state.friends and seat != state.declarer
    partners, opponents = sides(seat, state.players, state.declarer, state.revealed, is_friend,
                                state.friend_known)
    return Spot(
        seat=seat, players=state.players, hand=hand, options=options, trick=state.trick,
        leader=state.leader, led_suit=state.led_suit, trump=state.trump,
        trick_no=len(state.tricks), tricks=rules.spec.hand_size, declarer=state.declarer,
        partners=partners, opponents=opponents, gone=gone, variant=rules.variant,
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


def _higher(variant: str, card: str) -> tuple[str, ...]:
    suit, rank = SUIT_OF[card], RANK_OF[card]
    return tuple(c for c in VARIANTS[variant].deck if SUIT_OF[c] == suit and RANK_OF[c] > rank)


# (variant, card) -> the cards of its suit that rank higher, and per suit (None: jokers)
# every card of it: precomputed, since the playouts ask at every card.
_HIGHER: Final = {(v, c): _higher(v, c) for v in VARIANTS for c in VARIANTS[v].deck if SUIT_OF[c]}
_OF_SUIT: Final = {(v.name, s): tuple(c for c in v.deck if SUIT_OF[c] == s) for v in VARIANTS.values()
                   for s in (*SUITS, None)}


def is_boss(spot: Spot, card: str) -> bool:
    """No unseen card of the suit ranks higher (the Mighty aside)."""
    gone, mighty = spot.gone, spot.mighty
    higher = _HIGHER.get((spot.variant, card))
    return higher is not None and all(c in gone or c in mighty for c in higher)


def any_out(spot: Spot, suit: str | None) -> bool:
    """Whether a card of ``suit`` (None: a joker) is still unseen."""
    gone = spot.gone
    return any(c not in gone for c in _OF_SUIT.get((spot.variant, suit), ()))


def suit_lengths(hand: Iterable[str]) -> dict[str, int]:
    lengths = dict.fromkeys(SUITS, 0)
    for card in hand:
        suit = SUIT_OF[card]
        if suit is not None:
            lengths[suit] += 1
    return lengths

"""The Mighty beginner: rules of thumb, one pass over the hand, no search.

- Bid (§3): count the hand's likely tricks in each trump (the Mighty, the Joker, the top
  trumps, trump length, side aces), add the friend's and the kitty's share, turn tricks
  into points; bid the lowest bid that outbids in the best trump if the hand is worth it,
  else pass.
- Discard (§4.1): keep the Mighty, the Joker, trumps and aces; throw the short side
  suits, low cards first, and side point cards that would likely be lost (discarded, they
  count for the declarer). Change trump (§4.2) only when another trump is clearly better
  and still worth the raised contract.
- Call (§4.3): the Mighty if not held, else the Joker, else the top trumps not held.
- Play (§5): win a trick cheaply when it is worth it, spend the Mighty and the Joker on
  tricks with points (the Joker before the last trick, where it has no power), give
  points to a partner that is winning, throw low cards otherwise, and lead the Ripper at
  a Joker still out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from domain.bots import Budget
from domain.mighty.bots.knowledge import (
    Spot,
    any_out,
    is_boss,
    spot_from_state,
    spot_from_view,
    suit_lengths,
    winning_place,
)
from domain.mighty.cards import (
    JOKERS,
    POINTS_OF,
    RANK_OF,
    SUIT_OF,
    SUITS,
    TRUMPS,
    copies,
    mighties,
    mighty_of,
    points_of,
)
from domain.mighty.commands import (
    Bid,
    CallFriend,
    ChangeTrump,
    Discard,
    Exchange,
    HandCommand,
    Pass,
    Play,
)
from domain.mighty.exchange import raised_contract
from domain.mighty.legal import legal_commands
from domain.mighty.play import legal_plays
from domain.mighty.rules import RuleSet, Variant
from domain.mighty.state import Bidding, HandState, Playing
from domain.mighty.state import Exchange as ExchangeState
from domain.mighty.views import HandView
from domain.prng import Rng

_TRUMP_HONOUR: Final = {14: 1.0, 13: 0.75, 12: 0.5, 11: 0.3}


# ---------------------------------------------------------------- judging a hand

def hand_tricks(hand: Sequence[str], trump: str, spec: Variant) -> float:
    """The tricks a hand is likely to take itself with ``trump``."""
    mighty = mighties(trump, spec.packs)
    lengths = suit_lengths(c for c in hand if c not in mighty)
    average = spec.hand_size / 4
    tricks = 0.0
    for card in hand:
        if card in mighty:
            tricks += 1.0
        elif card in JOKERS:
            tricks += 0.8 if spec.packs == 1 else 0.6
        elif SUIT_OF[card] == trump:
            tricks += _TRUMP_HONOUR.get(RANK_OF[card], 0.15)
        elif RANK_OF[card] == 14:
            tricks += 0.9 if trump == "NT" else 0.75
        elif RANK_OF[card] == 13 and lengths[SUIT_OF[card] or "S"] >= 2:
            tricks += 0.3
    if trump == "NT":
        tricks += 0.3 * sum(max(0.0, n - average - 1) for n in lengths.values())
    else:
        tricks += 0.6 * max(0.0, lengths[trump] - average)
    return tricks


# The hand strength (``hand_tricks`` in its best trump) at which a hand bids the
# variant's lowest bid: about the strongest quarter of random hands, measured over random
# deals of each variant (a hand that strong, with the kitty and a friend, usually makes it).
BID_THRESHOLD: Final = {"mighty-5": 3.2, "mighty-4": 3.3, "mighty-3": 4.4, "mighty-4-short": 3.35,
                        "mighty-3-short": 3.6, "mighty-6": 5.1, "mighty-7": 4.2, "mighty-8": 4.0}


def expected_points(hand: Sequence[str], trump: str, spec: Variant, kitty_to_come: bool) -> float:
    """The contract a hand is worth: the lowest bid at the threshold strength, and half
    again the points a trick brings for each likely trick beyond it. After the kitty is
    taken the hand has grown into its threshold by about a trick."""
    tricks = hand_tricks(hand, trump, spec) - (0.0 if kitty_to_come else 1.0)
    per_trick = points_of(spec.deck) / spec.hand_size
    return spec.min_bid + (tricks - BID_THRESHOLD[spec.name]) * 1.5 * per_trick


def best_trump(hand: Sequence[str], spec: Variant, kitty_to_come: bool) -> tuple[str, float]:
    scored = [(expected_points(hand, t, spec, kitty_to_come), -i, t) for i, t in enumerate(TRUMPS)]
    points, _, trump = max(scored)
    return trump, points


def bid(rules: RuleSet, hand: Sequence[str], legal: Sequence[HandCommand], seat: int) -> HandCommand:
    trump, worth = best_trump(hand, rules.spec, kitty_to_come=True)
    bids = [c for c in legal if isinstance(c, Bid) and c.trump == trump]
    if bids and bids[0].points <= worth:
        return bids[0]
    return Pass(seat=seat)


# ---------------------------------------------------------------- the exchange

def keep_value(card: str, trump: str, lengths: dict[str, int], packs: int) -> float:
    """How much a card is worth keeping; the lowest are discarded."""
    if card in mighties(trump, packs):
        return 100.0
    if card in JOKERS:
        return 90.0
    suit, rank = SUIT_OF[card], RANK_OF[card]
    if suit == trump:
        return 50.0 + rank
    if rank == 14:
        return 40.0
    # short side suits go first; a side point card that would likely be lost is better
    # banked in the discards (they count for the declarer, §6)
    return rank + 3.0 * lengths[suit or "S"] - (4.0 if POINTS_OF[card] else 0.0)


def discard_cards(pool: Sequence[str], count: int, trump: str, packs: int) -> tuple[str, ...]:
    lengths = suit_lengths(pool)
    ranked = sorted(pool, key=lambda c: (keep_value(c, trump, lengths, packs), c))
    gone = set(ranked[:count])
    return tuple(c for c in pool if c in gone)


def discard(rules: RuleSet, seat: int, hand: Sequence[str], trump: str,
            kitty_left: Sequence[str]) -> Discard:
    spec = rules.spec
    if spec.kitty_keep is None:
        return Discard(seat=seat, cards=discard_cards(hand, spec.discard_count, trump, spec.packs))
    # mighty-3 (§7): keep the best kitty cards, then discard from the hand and those
    lengths = suit_lengths([*hand, *kitty_left])
    take = sorted(kitty_left, key=lambda c: (-keep_value(c, trump, lengths, spec.packs), c))[:spec.kitty_keep]
    kept = tuple(c for c in kitty_left if c in take)
    cards = discard_cards((*hand, *kept), spec.discard_count, trump, spec.packs)
    return Discard(seat=seat, cards=cards, take=kept)


def kitty_exchange(seat: int, hand: Sequence[str], trump: str, kitty_left: Sequence[str],
                   packs: int) -> Exchange:
    """mighty-3: take the best card left, discard the worst card then held."""
    lengths = suit_lengths([*hand, *kitty_left])
    take = max(kitty_left, key=lambda c: (keep_value(c, trump, lengths, packs), c))
    worst = min((*hand, take), key=lambda c: (keep_value(c, trump, lengths, packs), c))
    return Exchange(seat=seat, take=take, discard=worst)


def trump_change(rules: RuleSet, seat: int, hand: Sequence[str], points: int, trump: str,
                 changed: bool) -> ChangeTrump | None:
    """Only when another trump is clearly better and worth its raised contract (§4.2)."""
    if changed:
        return None
    spec = rules.spec
    now = expected_points(hand, trump, spec, kitty_to_come=False)
    other, worth = best_trump(hand, spec, kitty_to_come=False)
    raised = raised_contract(points, trump, other)
    if other != trump and worth - now >= 3 * spec.packs and raised <= min(worth, spec.max_bid):
        return ChangeTrump(seat=seat, trump=other)
    return None


def friend_wishes(trump: str, spec: Variant) -> list[str]:
    """The cards a declarer would like its friend to hold, best first."""
    packs = spec.packs
    wishes: list[str] = []
    if packs == 1:
        wishes += [mighty_of(trump), "JK"]
    else:
        wishes += sorted(copies(mighty_of(trump), 2)) + ["JK1", "JK2", "JK3", "JK4"]
    for suit in ([trump] if trump != "NT" else []) + [s for s in SUITS if s != trump]:
        for rank in "AKQ":
            wishes += sorted(copies(rank + suit, packs))
    return [c for c in wishes if c in spec.deck]


def call_friend(rules: RuleSet, seat: int, hand: Sequence[str], discards: Sequence[str],
                trump: str) -> CallFriend:
    spec = rules.spec
    if spec.max_friends == 0:
        return CallFriend(seat=seat, friend="none")
    held = set(hand) | set(discards)
    free = [c for c in friend_wishes(trump, spec) if c not in held]
    if spec.max_friends >= 2 and len(free) >= 2:
        return CallFriend(seat=seat, friend=(free[0], free[1]))
    return CallFriend(seat=seat, friend=free[0] if free else "none")


# ---------------------------------------------------------------- play

def _pick(options: Sequence[Play], card: str, spot: Spot, suit: str | None = None) -> Play:
    """The legal play of ``card``: a joker lead names ``suit``; a declared Ripper calls."""
    fallback = None
    for option in options:
        if option.card != card:
            continue
        if option.suit is not None and suit is not None and option.suit != suit:
            fallback = fallback or option
            continue
        if option.joker_call is False and spot.declared_calls:
            fallback = fallback or option
            continue
        return option
    return fallback or options[0]


def _low(cards: Sequence[str], spot: Spot) -> str:
    """The card that costs least to lose: no points, no trump, low rank."""
    return min(cards, key=lambda c: (c in spot.mighty or c in JOKERS, POINTS_OF[c],
                                     SUIT_OF[c] == spot.trump, RANK_OF[c], c))


def _longest_suit(spot: Spot, exclude: str | None = None) -> str:
    lengths = suit_lengths(c for c in spot.hand if c not in spot.mighty)
    return max((s for s in SUITS if s != exclude), key=lambda s: (lengths[s], s))


def play(spot: Spot) -> Play:
    options = spot.options
    if len(options) == 1:
        return options[0]
    cards = list(dict.fromkeys(o.card for o in options))
    jokers = [c for c in cards if c in JOKERS]
    # the Joker has no power in the last trick: spend it before
    if jokers and spot.joker_power and spot.trick_no >= spot.tricks - 2:
        return _pick(options, jokers[0], spot, _longest_suit(spot))
    if not spot.trick:
        return lead(spot, cards)
    return follow(spot, cards)


def lead(spot: Spot, cards: list[str]) -> Play:
    options = spot.options
    unseen_joker = any_out(spot, None)
    rippers = [c for c in cards if c in spot.rippers]
    joker_friend = spot.seat == spot.declarer and not spot.partners  # its friend may hold it
    if rippers and unseen_joker and spot.trick_no > 0 and not joker_friend:
        return _pick(options, rippers[0], spot)
    plain = [c for c in cards if c not in JOKERS and c not in spot.mighty]
    trumps = [c for c in plain if SUIT_OF[c] == spot.trump]
    on_declarer_side = spot.seat == spot.declarer or spot.declarer in spot.partners
    if on_declarer_side and trumps and spot.trick_no > 0:
        top = max(trumps, key=lambda c: (RANK_OF[c], c))
        if is_boss(spot, top) and any_out(spot, spot.trump):
            return _pick(options, top, spot)
    bosses = [c for c in plain if SUIT_OF[c] != spot.trump and is_boss(spot, c)]
    if bosses:
        return _pick(options, max(bosses, key=lambda c: (POINTS_OF[c], RANK_OF[c], c)), spot)
    if plain:
        suit = _longest_suit(spot, exclude=spot.trump)
        side = [c for c in plain if SUIT_OF[c] == suit] or plain
        return _pick(options, _low(side, spot), spot)
    return _pick(options, _low(cards, spot), spot, _longest_suit(spot))


def follow(spot: Spot, cards: list[str]) -> Play:
    options = spot.options
    trick = spot.trick
    place = winning_place(spot, trick, spot.led_suit)
    winner = (spot.leader + place) % spot.players
    last = len(trick) == spot.players - 1
    points = sum(POINTS_OF[c] for c in trick)
    winners = [c for c in cards if winning_place(spot, (*trick, c), spot.led_suit) == len(trick)]
    special = [c for c in winners if c in spot.mighty or (c in JOKERS and spot.joker_power)]
    cheap = [c for c in winners if c not in special]
    if winner in spot.partners:
        safe = last or trick[place] in spot.mighty or is_boss(spot, trick[place])
        keep = [c for c in cards if c not in spot.mighty and c not in JOKERS]
        if safe and keep:  # give points to the partner taking the trick
            return _pick(options, max(keep, key=lambda c: (POINTS_OF[c] and RANK_OF[c] != 14,
                                                           -RANK_OF[c], c)), spot)
        return _pick(options, _low(cards, spot), spot)
    if cheap:
        lowest = min(cheap, key=lambda c: (SUIT_OF[c] == spot.trump, RANK_OF[c], c))
        if last or is_boss(spot, lowest):
            return _pick(options, lowest, spot)
        if points >= 1:
            bosses = [c for c in cheap if is_boss(spot, c)]
            return _pick(options, min(bosses, key=lambda c: (RANK_OF[c], c)) if bosses
                         else max(cheap, key=lambda c: (RANK_OF[c], c)), spot)
    if special and (points >= 2 or (points >= 1 and last)):
        # the Joker first: the Mighty beats it, so it is the one to use while it can win
        jokers = [c for c in special if c in JOKERS]
        return _pick(options, jokers[0] if jokers else special[0], spot)
    rest = [c for c in cards if c not in spot.mighty and c not in JOKERS] or cards
    return _pick(options, _low(rest, spot), spot)


# ---------------------------------------------------------------- the policy

def choose(rules: RuleSet, view: HandView, rng: Rng) -> HandCommand:
    """The beginner's command for a seat's view."""
    seat = view.viewer
    assert seat is not None and view.hand is not None
    legal = view.legal
    if view.phase == "bidding":
        return bid(rules, view.hand, legal, seat)
    if view.phase == "exchange":
        assert view.contract is not None
        points, trump = view.contract
        if view.discard_count is not None and not legal:
            return discard(rules, seat, view.hand, trump, view.kitty or ())
        exchanges = [c for c in legal if isinstance(c, Exchange)]
        if exchanges:
            left = tuple(dict.fromkeys(c.take for c in exchanges))
            return kitty_exchange(seat, view.hand, trump, left, rules.spec.packs)
        bid_points = next((p for s, p, t in reversed(view.auction) if p), points)
        change = trump_change(rules, seat, view.hand, points, trump, points != bid_points)
        if change is not None:
            return change
        return call_friend(rules, seat, view.hand, view.discards or (), trump)
    return play(spot_from_view(rules, view))


def beginner_policy(rules: RuleSet, view: HandView, seed: int, budget: Budget) -> HandCommand:
    return choose(rules, view, Rng(seed))


def act(state: HandState, seat: int, played: set[str] | None = None) -> HandCommand:
    """The beginner's command read off a state, looking only at what ``seat`` may see:
    the expert's playouts run every seat with it, without building views."""
    rules = state.rules
    if isinstance(state, Playing):
        return play(spot_from_state(state, seat, legal_plays(state, seat), played))
    if isinstance(state, Bidding):
        return bid(rules, state.hands[seat], legal_commands(state, seat), seat)
    assert isinstance(state, ExchangeState)
    hand = state.hands[seat]
    if state.exchanger is not None:
        return kitty_exchange(seat, hand, state.trump, state.kitty_left, rules.spec.packs)
    if state.discards is None:
        return discard(rules, seat, hand, state.trump, state.kitty_left)
    change = trump_change(rules, seat, hand, state.points, state.trump, state.trump_changed)
    return change or call_friend(rules, seat, hand, state.discards, state.trump)

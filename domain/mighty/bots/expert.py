"""The Mighty expert: determinized search from the seat's view alone.

Each round samples a world (``worlds``: a deal of the unseen cards consistent with the
view, rebuilt into a full state), plays every candidate command in it and then the rest
of the hand with beginners in every seat (``beginner.act``), and scores the seat's result
(its hand score, the side's point cards as a small tie-break). The candidate with the
best mean wins; the candidates come in the beginner's order, so ties keep its choice.

The candidates are capped so the budget buys several rounds: a bid is pass or the
lowest outbidding bid in the two best trumps; a discard is one of the sets made of the
lowest-valued cards; after the discard, the beginner's call, a trump change, or another
call; a play is a legal card, of which low cards of a suit that are equivalent (no
point, not the highest or lowest held) are dropped.
"""

from __future__ import annotations

from itertools import combinations
from typing import Final

from domain.bots import Budget, Playouts
from domain.mighty.bots import beginner
from domain.mighty.bots.knowledge import suit_lengths
from domain.mighty.bots.worlds import knowledge, world
from domain.mighty.cards import JOKERS, POINTS_OF, RANK_OF, SUIT_OF, TRUMPS, mighties, points_of
from domain.mighty.commands import Bid, CallFriend, ChangeTrump, Discard, HandCommand, Pass, Play
from domain.mighty.decider import decide, evolve
from domain.mighty.exchange import raised_contract
from domain.mighty.rules import RuleSet
from domain.mighty.state import Finished, HandState, Playing, Redeal, to_act
from domain.mighty.views import HandView
from domain.prng import Rng

# Playouts per decision at the default budget, per variant: p99 within 300 ms on one core.
DEFAULT_PLAYOUTS: Final = {"mighty-5": 100, "mighty-4": 88, "mighty-3": 100, "mighty-4-short": 100,
                           "mighty-3-short": 120, "mighty-6": 72, "mighty-7": 78, "mighty-8": 90}
MAX_DISCARDS: Final = 6
_SIDE_WEIGHT: Final = 0.1


def playout_value(state: HandState, seat: int) -> float:
    """Play to the end with beginners; the seat's score, plus a little per point card
    its side took (so a sure loss still prefers losing by less)."""
    played: set[str] | None = None
    while not isinstance(state, Finished | Redeal):
        actor = to_act(state)
        assert actor is not None
        if played is None and isinstance(state, Playing):
            played = {c for t in state.tricks for c in t.cards} | set(state.trick)
        command = beginner.act(state, actor, played)
        for event in decide(state, command):
            state = evolve(state, event)
        if played is not None and isinstance(command, Play):
            played.add(command.card)
    if isinstance(state, Redeal):
        return 0.0
    scored = state.scored
    side = scored.declarer_side_points
    on_side = seat == state.declarer or seat in state.friends
    total = points_of(state.rules.spec.deck)
    return scored.scores[seat] + _SIDE_WEIGHT * (side if on_side else total - side)


def _after(state: HandState, command: HandCommand) -> HandState:
    for event in decide(state, command):
        state = evolve(state, event)
    return state


def bid_candidates(rules: RuleSet, view: HandView) -> list[HandCommand]:
    assert view.viewer is not None and view.hand is not None
    seat = view.viewer
    first = beginner.bid(rules, view.hand, view.legal, seat)
    ranked = sorted(TRUMPS, key=lambda t: -beginner.expected_points(view.hand or (), t, rules.spec, True))
    candidates: list[HandCommand] = [first]
    for trump in ranked[:2]:
        worth = beginner.expected_points(view.hand, trump, rules.spec, True)
        bids = [c for c in view.legal if isinstance(c, Bid) and c.trump == trump]
        if bids and bids[0].points <= worth + 3 * rules.spec.packs and bids[0] not in candidates:
            candidates.append(bids[0])
    if Pass(seat=seat) not in candidates and Pass(seat=seat) in view.legal:
        candidates.append(Pass(seat=seat))
    return candidates


def discard_candidates(rules: RuleSet, view: HandView) -> list[HandCommand]:
    assert view.viewer is not None and view.hand is not None and view.contract is not None
    seat, trump, spec = view.viewer, view.contract[1], rules.spec
    first = beginner.discard(rules, seat, view.hand, trump, view.kitty or ())
    if spec.kitty_keep is not None:
        return [first]
    lengths = suit_lengths(view.hand)
    ranked = sorted(view.hand, key=lambda c: (beginner.keep_value(c, trump, lengths, spec.packs), c))
    count = spec.discard_count
    candidates: list[HandCommand] = [first]
    for cards in combinations(ranked[:count + 2], count):
        command = Discard(seat=seat, cards=tuple(c for c in view.hand if c in cards))
        if command not in candidates:
            candidates.append(command)
        if len(candidates) >= MAX_DISCARDS:
            break
    return candidates


def call_candidates(rules: RuleSet, view: HandView, first: HandCommand) -> list[HandCommand]:
    assert view.viewer is not None and view.hand is not None and view.contract is not None
    seat, (points, trump), spec = view.viewer, view.contract, rules.spec
    candidates: list[HandCommand] = [first]
    bid_points = next((p for _, p, _ in reversed(view.auction) if p), points)
    if points == bid_points:
        for other in TRUMPS:
            if other == trump or raised_contract(points, trump, other) > spec.max_bid:
                continue
            near = beginner.expected_points(view.hand, other, spec, False) >= beginner.expected_points(
                view.hand, trump, spec, False) - 1
            if near and ChangeTrump(seat=seat, trump=other) not in candidates:
                candidates.append(ChangeTrump(seat=seat, trump=other))
    if spec.max_friends == 1:
        held = set(view.hand) | set(view.discards or ())
        wishes = [c for c in beginner.friend_wishes(trump, spec) if c not in held][:3]
        for call in (*wishes, "none"):
            command = CallFriend(seat=seat, friend=call)
            if command not in candidates:
                candidates.append(command)
    return candidates


def play_candidates(view: HandView) -> list[HandCommand]:
    """Every legal play but the low cards of a suit that play alike: of the cards of a
    suit with no point, only the lowest and the highest held are kept."""
    plays = [c for c in view.legal if isinstance(c, Play)]
    assert view.contract is not None
    trump = view.contract[1]
    keep: list[HandCommand] = []
    by_suit: dict[str | None, list[Play]] = {}
    for p in plays:
        plain = p.card not in JOKERS and not POINTS_OF[p.card] and p.card not in mighties(trump, 2) | mighties(trump, 1)
        if plain:
            by_suit.setdefault(SUIT_OF[p.card], []).append(p)
        else:
            keep.append(p)
    for group in by_suit.values():
        group.sort(key=lambda p: RANK_OF[p.card])
        keep.extend(dict.fromkeys([group[0], group[-1]]))
    return keep


def candidates_for(rules: RuleSet, view: HandView, rng: Rng) -> list[HandCommand] | None:
    """The commands worth searching, or None when the beginner's answer is the answer."""
    if view.phase == "bidding":
        return bid_candidates(rules, view)
    if view.phase == "exchange":
        if rules.spec.kitty_keep is not None and (view.declarer != view.viewer or view.discards is None):
            return None  # mighty-3's kitty exchange: the beginner's pick (see docs/bots.md)
        if view.discards is None:
            return discard_candidates(rules, view)
        return call_candidates(rules, view, beginner.choose(rules, view, rng))
    first = beginner.choose(rules, view, rng)
    rest = [c for c in play_candidates(view) if c != first]
    return [first, *rest]


def expert_policy(rules: RuleSet, view: HandView, seed: int, budget: Budget) -> HandCommand:
    rng = Rng(seed)
    assert view.viewer is not None
    candidates = candidates_for(rules, view, rng)
    if candidates is None:
        return beginner.choose(rules, view, rng)
    if len(candidates) == 1:
        return candidates[0]
    seat = view.viewer
    know = knowledge(rules, view)
    search: Playouts[HandState, HandCommand] = Playouts(
        world=lambda r: world(rules, view, know, r),
        playout=lambda state, command, r: playout_value(_after(state, command), seat),
    )
    playouts = budget.playouts if budget.playouts is not None else DEFAULT_PLAYOUTS[rules.variant]
    return search.best(candidates, playouts, rng, budget.stop)

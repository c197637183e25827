"""Worlds a Mighty seat may be in: deals of the unseen cards consistent with its view,
rebuilt into full hand states the real decider can play out.

What the view tells (docs/rules/mighty.md §8), and so what a sampled deal respects:
- every hand's size, the seat's own hand, every card played, the declarer's discards
  (to the declarer);
- voids: a seat that played neither the led suit nor a Mighty or a Joker holds none of
  the led suit (the Mighty of that suit included, §5); a seat that answered a Ripper's
  joker call with neither a Joker nor a Mighty holds no Joker;
- the called cards not played yet are in a hand other than the declarer's (§4.3: not
  its own, not among its discards);
- the kitty, when shown, went to the declarer: its unplayed cards are in the declarer's
  hand or the discards.
The cards not in a hand (the kitty while bidding, the discards after) form a pile.
"""

from __future__ import annotations

from typing import NamedTuple, TypedDict

from domain.mighty.cards import JOKERS, SUIT_OF, is_joker, mighties, points_of, rippers
from domain.mighty.commands import Bid, Pass
from domain.mighty.decider import deal_event, decide, evolve
from domain.mighty.events import TrickWon
from domain.mighty.rules import RuleSet
from domain.mighty.state import AuctionEntry, Exchange, HandState, Playing
from domain.mighty.views import HandView
from domain.prng import Rng
from domain.sampling import sample_holdings


class Knowledge(NamedTuple):
    seat: int
    unseen: tuple[str, ...]
    room: tuple[int, ...]  # per seat (0 for this one), then the pile
    allowed: dict[str, frozenset[int]]


def called_cards(rules: RuleSet, view: HandView) -> tuple[str, ...]:
    if isinstance(view.friend_calls, tuple):
        return view.friend_calls
    if view.friend_call is not None:
        call, card = view.friend_call
        return (card,) if card is not None else (() if call == "none" else (call,))
    return ()


def knowledge(rules: RuleSet, view: HandView) -> Knowledge:
    assert view.viewer is not None and view.hand is not None
    seat, n = view.viewer, len(view.hand_sizes)
    seen = set(view.hand) | set(view.discards or ())
    played_by: dict[str, int] = {}
    tricks: list[tuple[int, tuple[str, ...], str | None]] = [(t.leader, t.cards, None) for t in view.tricks]
    if view.trick is not None:
        tricks.append((view.trick.leader, view.trick.cards, view.led_suit))
    for leader, cards, _ in tricks:
        for i, card in enumerate(cards):
            played_by[card] = (leader + i) % n
    seen.update(played_by)
    unseen = tuple(c for c in rules.spec.deck if c not in seen)
    room = [0 if s == seat else view.hand_sizes[s] for s in range(n)]
    room.append(len(unseen) - sum(room))
    pile = n
    everyone = frozenset(range(n + 1)) - {seat}
    barred: dict[int, set[str]] = {s: set() for s in range(n + 1)}
    if view.contract is not None and view.phase == "play":
        trump = view.contract[1]
        ripper = rippers(trump, rules.spec.ripper_rank, rules.spec.packs)
        mighty = mighties(trump, rules.spec.packs)
        for no, (leader, cards, named) in enumerate(tricks):
            if is_joker(cards[0]) and named is None:
                continue  # the named suit of a past joker lead is not in the view
            led = named if named is not None else SUIT_OF[cards[0]]
            calls = (rules.joker_call == "on_ripper_lead" and no > 0 and cards[0] in ripper)
            for i, card in enumerate(cards[1:], start=1):
                who = (leader + i) % n
                if card in mighty or card in JOKERS:
                    continue
                if SUIT_OF[card] != led and led is not None:
                    barred[who].update(c for c in unseen if SUIT_OF[c] == led)
                if calls:
                    barred[who].update(c for c in unseen if c in JOKERS)
        declarer = view.declarer
        assert declarer is not None
        for card in called_cards(rules, view):
            if card in unseen:
                barred[declarer].add(card)
                barred[pile].add(card)
        if view.kitty is not None and seat != declarer and rules.spec.kitty_keep is None:
            for card in view.kitty:
                if card in unseen:
                    for s in range(n):
                        if s != declarer:
                            barred[s].add(card)
    allowed: dict[str, frozenset[int]] = {}
    for card in unseen:
        holders = frozenset(h for h in everyone if card not in barred[h] and room[h] > 0)
        if holders != everyone:
            allowed[card] = holders
    return Knowledge(seat, unseen, tuple(room), allowed)


def sample_deal(know: Knowledge, view: HandView, rng: Rng) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """Each seat's hand now (this seat's own from the view) and the pile."""
    assert view.hand is not None
    holdings = sample_holdings(know.unseen, know.room, know.allowed, rng)
    hands = tuple(view.hand if s == know.seat else tuple(holdings[s]) for s in range(len(know.room) - 1))
    return hands, tuple(holdings[-1])


def _bid_entry(view: HandView) -> tuple[int, str]:
    for _, points, trump in reversed(view.auction):
        if points:
            return points, trump
    assert view.contract is not None
    return view.contract


def world(rules: RuleSet, view: HandView, know: Knowledge, rng: Rng) -> HandState:
    """A full hand state consistent with the view, the unseen cards sampled."""
    hands, pile = sample_deal(know, view, rng)
    first_bidder = view.auction[0][0] if view.auction else (view.to_act or 0)
    if view.phase == "bidding":
        state: HandState = evolve(None, deal_event(rules, dealer=view.dealer, hands=hands, kitty=pile,
                                                   first_bidder=first_bidder, hand_no=view.hand_no))
        for seat, points, trump in view.auction:
            command = Bid(seat=seat, points=points, trump=trump) if points else Pass(seat=seat)
            for event in decide(state, command):
                state = evolve(state, event)
        return state
    assert view.declarer is not None and view.contract is not None
    points, trump = view.contract
    bid_points, bid_trump = _bid_entry(view)
    common = _Contract(
        rules=rules, dealer=view.dealer, first_bidder=first_bidder, hand_no=view.hand_no,
        hands=hands, kitty=view.kitty or pile[:rules.spec.kitty_size], dealt=hands,
        auction=view.auction, declarer=view.declarer, points=points, trump=trump,
        bid_points=bid_points, bid_trump=bid_trump, kitty_shown=rules.kitty_shown,
    )
    changed = (points, trump) != (bid_points, bid_trump)
    if view.phase == "exchange":
        return Exchange(**common, discards=view.discards, trump_changed=changed)
    return _playing(rules, view, hands, pile, common, changed)


class _Contract(TypedDict):
    """The fields every state after the auction shares (``state._Contracted``)."""

    rules: RuleSet
    dealer: int
    first_bidder: int
    hand_no: int
    hands: tuple[tuple[str, ...], ...]
    kitty: tuple[str, ...]
    dealt: tuple[tuple[str, ...], ...]
    auction: tuple[AuctionEntry, ...]
    declarer: int
    points: int
    trump: str
    bid_points: int
    bid_trump: str
    kitty_shown: bool


def _playing(rules: RuleSet, view: HandView, hands: tuple[tuple[str, ...], ...], pile: tuple[str, ...],
             common: _Contract, changed: bool) -> Playing:
    n = len(hands)
    assert view.declarer is not None and view.contract is not None
    played_by: dict[str, int] = {}
    for t in view.tricks:
        for i, card in enumerate(t.cards):
            played_by[card] = (t.leader + i) % n
    trick = view.trick.cards if view.trick is not None else ()
    leader = view.trick.leader if view.trick is not None else (view.to_act or 0)
    for i, card in enumerate(trick):
        played_by[card] = (leader + i) % n
    calls = called_cards(rules, view)
    friends: set[int] = set()
    for call in calls:
        if call == "first_trick":
            if view.tricks and view.tricks[0].winner != view.declarer:
                friends.add(view.tricks[0].winner or 0)
        elif call in played_by:
            friends.add(played_by[call])
        else:
            friends.update(s for s, h in enumerate(hands) if call in h)
    pending = tuple(c for c in calls if (c == "first_trick" and not view.tricks)
                    or (c != "first_trick" and c not in played_by))
    if rules.spec.packs > 1:
        revealed = tuple(view.friends) if isinstance(view.friends, tuple) else ()
        friend = None
    else:
        revealed = (view.friend,) if view.friend_known and view.friend is not None else ()
        friend = min(friends) if friends else None
    trump = view.contract[1]
    call_made = bool(trick) and bool(view.tricks) and trick[0] in rippers(
        trump, rules.spec.ripper_rank, rules.spec.packs) and (
        view.joker_call if isinstance(view.joker_call, bool) else rules.joker_call == "on_ripper_lead")
    called = call_made and any(is_joker(c) for s, h in enumerate(hands) if s != leader for c in h)
    discards = view.discards if view.discards is not None else pile[:rules.spec.discard_count]
    call_kind, called_card = view.friend_call if view.friend_call is not None else ("none", None)
    return Playing(
        **common,
        discards=discards, trump_changed=changed, call=call_kind, called_card=called_card,
        lead_suit=view.lead_suit, friend=friend, friend_known=view.friend_known, calls=calls,
        pending=pending, friends=tuple(sorted(friends)), revealed=revealed,
        tricks=tuple(TrickWon(trick=i, leader=t.leader, cards=t.cards, winner=t.winner or 0,
                              points=points_of(t.cards)) for i, t in enumerate(view.tricks)),
        taken=view.face_up_points, leader=leader, to_act=view.to_act or 0, trick=trick,
        led_suit=view.led_suit, joker_called=called, joker_call_made=call_made,
    )

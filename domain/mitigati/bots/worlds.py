"""Worlds a Mitigati seat may be in: deals of the unseen cards consistent with its view,
rebuilt into full hand states the real decider can play out.

What the view tells: the seat's own cards, every hand's size, every card played, the
dealer's discards (to the dealer), the declarations (tarocchi shows its trumps; kings
means the four kings; mitigati means ``T20``, ``T1`` and the Fool), and voids: a seat
that did not follow the suit holds none of it, and one that then played no trump either
holds no trump (the Fool aside). While bargaining, the packets still to come are unseen
too, the seat's own included; after the discard the dealer's three discards (never an
honour) form a pile.
"""

from __future__ import annotations

from typing import NamedTuple, TypedDict

from domain.mitigati.cards import DECK, FOOL, KINGS, MITIGATI, SUIT_OF, TRUMP, is_honour
from domain.mitigati.events import TrickWon
from domain.mitigati.play import seat_at, suit_to_follow
from domain.mitigati.rules import PLAYERS, ROUNDS, RuleSet, packet_size
from domain.mitigati.state import (
    Bargaining,
    Declaring,
    Discarding,
    FoolRecord,
    MitigatiState,
    Playing,
)
from domain.mitigati.views import MitigatiView
from domain.prng import Rng
from domain.sampling import sample_holdings

PILE = PLAYERS


class Knowledge(NamedTuple):
    seat: int
    unseen: tuple[str, ...]
    room: tuple[int, ...]  # per seat, then the pile
    allowed: dict[str, frozenset[int]]


def _future(view: MitigatiView, seat: int) -> int:
    """Cards of ``seat``'s packets still to be dealt (session k: rounds 0..k dealt)."""
    if view.phase != "bargaining" or view.bargaining is None:
        return 0
    dealt = view.bargaining.session + 1
    return sum(packet_size(r, seat, view.dealer) for r in range(dealt, ROUNDS))


def knowledge(view: MitigatiView) -> Knowledge:
    assert view.viewer is not None and view.hand is not None
    seat = view.viewer
    tricks = [(t.leader, t.cards) for t in view.tricks]
    if view.trick is not None:
        tricks.append((view.trick.leader, view.trick.cards))
    seen = set(view.hand) | set(view.discards or ()) | {c for _, cards in tricks for c in cards}
    unseen = tuple(c for c in DECK if c not in seen)
    room = [(0 if s == seat else view.hand_sizes[s]) + _future(view, s) for s in range(PLAYERS)]
    room.append(len(unseen) - sum(room))
    barred: dict[int, set[str]] = {h: set() for h in range(PLAYERS + 1)}
    for leader, cards in tricks:
        led = suit_to_follow(cards)
        for place, card in enumerate(cards):
            who = seat_at(leader, place)
            if card == FOOL or led is None or SUIT_OF[card] == led:
                continue
            barred[who].update(c for c in unseen if SUIT_OF[c] == led)
            if SUIT_OF[card] != TRUMP:
                barred[who].update(c for c in unseen if SUIT_OF[c] == TRUMP)
    fixed: dict[str, int] = {}
    for d in view.declarations:
        shown: set[str] = set(d.shown or ()) | (KINGS if d.name == "kings" else set()) | (
            MITIGATI if d.name == "mitigati" else set())
        for card in shown:
            fixed[card] = d.seat
    barred[PILE].update(c for c in unseen if is_honour(c))
    everyone = frozenset(h for h in range(PLAYERS + 1) if room[h] > 0)
    allowed: dict[str, frozenset[int]] = {}
    for card in unseen:
        if card in fixed and fixed[card] != seat:
            allowed[card] = frozenset({fixed[card]})
            continue
        holders = frozenset(h for h in everyone if card not in barred[h])
        if holders != everyone:
            allowed[card] = holders
    return Knowledge(seat, unseen, tuple(room), allowed)


class _Common(TypedDict):
    """The fields every Mitigati state has (``state``)."""

    rules: RuleSet
    dealer: int
    hand_no: int


def world(rules: RuleSet, view: MitigatiView, know: Knowledge, rng: Rng) -> MitigatiState:
    assert view.viewer is not None and view.hand is not None
    held = sample_holdings(know.unseen, know.room, know.allowed, rng)
    seat = view.viewer
    sizes = view.hand_sizes
    hands = tuple(view.hand if s == seat else tuple(held[s][:sizes[s]]) for s in range(PLAYERS))
    common = _Common(rules=rules, dealer=view.dealer, hand_no=view.hand_no)
    if view.phase == "bargaining":
        b = view.bargaining
        assert b is not None
        rows = b.session + 1
        future = [list(held[s][sizes[s]:]) if s != seat else list(held[s]) for s in range(PLAYERS)]
        packets = []
        for r in range(ROUNDS):
            row = []
            for s in range(PLAYERS):
                if r < rows:
                    row.append(hands[s][5 * r:5 * r + 5])
                else:
                    size = packet_size(r, s, view.dealer)
                    row.append(tuple(future[s][:size]))
                    del future[s][:size]
            packets.append(tuple(row))
        passes = 0
        for _, action, _ in reversed(b.said):
            if action != "pass":
                break
            passes += 1
        return Bargaining(**common, packets=tuple(packets), rounds_dealt=rows, hands=hands,
                          session=b.session, to_act=view.to_act or 0, payer=b.payer, offer=b.offer,
                          seller=b.seller, ask=b.ask, passes=passes, history=b.said)
    if view.phase == "discard":
        return Discarding(**common, packets=(), rounds_dealt=ROUNDS, hands=hands)
    discards = view.discards if view.discards is not None else tuple(held[PILE])
    if view.phase == "declaring":
        order = [(view.dealer + 2) % 3, (view.dealer + 1) % 3, view.dealer]  # R, L, dealer
        return Declaring(**common, packets=(), rounds_dealt=ROUNDS, hands=hands, discards=discards,
                         declarations=view.declarations, to_act=view.to_act or 0,
                         declared=order.index(view.to_act or 0))
    return _playing(view, hands, discards, common)


def _playing(view: MitigatiView, hands: tuple[tuple[str, ...], ...], discards: tuple[str, ...],
             common: _Common) -> Playing:
    """The won cards are rebuilt trick by trick, the Fool's exchange where it happened."""
    won: list[list[str]] = [[] for _ in range(PLAYERS)]
    fool = view.fool
    tricks = []
    for i, t in enumerate(view.tricks):
        winner = t.winner or 0
        won[winner].extend(t.cards)
        if fool is not None and fool.trick == i:
            won[winner].remove(FOOL)
            won[fool.seat].append(FOOL)
        if fool is not None and fool.card is not None and fool.card != FOOL and fool.paid_in == i:
            won[fool.seat].remove(fool.card)
            won[fool.to].append(fool.card)
        tricks.append(TrickWon(trick=i, leader=t.leader, cards=t.cards, winner=winner))
    record = fool if fool is None else FoolRecord(seat=fool.seat, trick=fool.trick, to=fool.to,
                                                  card=fool.card, paid_in=fool.paid_in)
    trick = view.trick.cards if view.trick is not None else ()
    leader = view.trick.leader if view.trick is not None else (view.to_act or 0)
    return Playing(**common, packets=(), rounds_dealt=ROUNDS, hands=hands, discards=discards,
                   declarations=view.declarations, tricks=tuple(tricks),
                   won=tuple(tuple(w) for w in won), fool=record, leader=leader,
                   to_act=view.to_act or 0, trick=trick)

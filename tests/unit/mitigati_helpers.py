"""Builders for the Mitigati unit tests: deals cut into packets, commands, and play
states built directly, so a test states only the cards that matter."""

from __future__ import annotations

from typing import Any

from domain.mitigati.commands import Bargain, Declare, Discard, MitigatiCommand, Play
from domain.mitigati.decider import deal_event, decide, evolve
from domain.mitigati.events import MitigatiEvent, TrickWon
from domain.mitigati.rules import make_rules, packet_size
from domain.mitigati.state import FoolRecord, MitigatiState, Packets, Playing

RULES = make_rules()

# Dealer 0, so R = 2 and L = 1. R: all swords and the low batons; L: the top batons, all
# coins, cups 1-7 and the Fool; the dealer: cups 8-K and every trump (28 cards).
SEAT2 = ("1S 2S 3S 4S 5S 6S 7S 8S 9S TS FS NS QS KS "
         "1B 2B 3B 4B 5B 6B 7B 8B 9B TB FB")
SEAT1 = ("NB QB KB 1D 2D 3D 4D 5D 6D 7D 8D 9D TD FD ND QD KD "
         "1C 2C 3C 4C 5C 6C 7C FOOL")
SEAT0 = "8C 9C TC FC NC QC KC " + " ".join(f"T{n}" for n in range(1, 22))
STANDARD = [SEAT0, SEAT1, SEAT2]


def packets_of(hands: list[str], dealer: int = 0) -> Packets:
    """Each seat's cards in order: 5 a round, the dealer's last packet 8."""
    cards = [h.split() for h in hands]
    rows = []
    taken = [0, 0, 0]
    for r in range(5):
        row = []
        for seat in range(3):
            size = packet_size(r, seat, dealer)
            row.append(tuple(cards[seat][taken[seat]:taken[seat] + size]))
            taken[seat] += size
        rows.append(tuple(row))
    return tuple(rows)


def dealt(hands: list[str] | None = None, dealer: int = 0) -> MitigatiState:
    return evolve(None, deal_event(RULES, dealer=dealer, packets=packets_of(hands or STANDARD, dealer)))


def apply(state: MitigatiState, *commands: MitigatiCommand) -> MitigatiState:
    for command in commands:
        for event in decide(state, command):
            state = evolve(state, event)
    return state


def events_of(state: MitigatiState, command: MitigatiCommand) -> list[MitigatiEvent]:
    return decide(state, command)


def bargain(seat: int, action: str, amount: int | None = None) -> Bargain:
    return Bargain(seat=seat, action=action, amount=amount)  # type: ignore[arg-type]


def passes(*seats: int) -> list[MitigatiCommand]:
    return [bargain(s, "pass") for s in seats]


def discard(cards: str, seat: int = 0) -> Discard:
    return Discard(seat=seat, cards=tuple(cards.split()))


def declare(seat: int, *names: str) -> Declare:
    return Declare(seat=seat, combinations=names)  # type: ignore[arg-type]


def play(seat: int, card: str) -> Play:
    return Play(seat=seat, card=card)


def through_bargaining(hands: list[str] | None = None, dealer: int = 0) -> MitigatiState:
    """Three sessions of three passes: the dealer holds 28 cards and discards."""
    r, left = (dealer + 2) % 3, (dealer + 1) % 3
    return apply(dealt(hands, dealer), *passes(r, left, dealer) * 3)


def declared(hands: list[str] | None = None, discards: str = "8C 9C TC") -> MitigatiState:
    state = apply(through_bargaining(hands), discard(discards))
    return apply(state, declare(2), declare(1), declare(0))


def playing(hands: list[str], leader: int, trick: str = "", won: list[str] | None = None,
            fool: FoolRecord | None = None, tricks_done: int = 0, **extra: Any) -> Playing:
    """A play state built directly: hands as written, ``trick`` played from ``leader``."""
    cards = tuple(trick.split())
    to_act = (leader + 2 * len(cards)) % 3
    dummy = TrickWon(trick=0, leader=0, cards=(), winner=0)
    return Playing(rules=RULES, dealer=0, hand_no=0, packets=packets_of(STANDARD), rounds_dealt=5,
                   hands=tuple(tuple(h.split()) for h in hands), discards=("8C", "9C", "TC"),
                   won=tuple(tuple(w.split()) for w in (won or ["", "", ""])), fool=fool,
                   tricks=(dummy,) * tricks_done, leader=leader, to_act=to_act, trick=cards, **extra)

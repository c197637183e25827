"""Declarations before the first lead (docs/rules/mitigati.md, "Declarations").

Two independent parts: ``tarocchi`` (ten or more trumps, the Fool counting only as the
tenth) and the honour part, which is empty or exactly the single best set, so every hand
has one right answer. Each opponent pays the declarer each declared value.
"""

from __future__ import annotations

from collections.abc import Iterable

from domain.errors import BadDeclaration
from domain.mitigati.cards import FOOL, HONOURS, KINGS, MITIGATI, is_trump, trump_number
from domain.mitigati.commands import COMBINATIONS, Combination, Declare
from domain.mitigati.events import Declaration, Declared
from domain.mitigati.rules import right_of
from domain.mitigati.state import Declaring, Playing

ORDER: dict[str, int] = {name: i for i, name in enumerate(COMBINATIONS)}


def tarocchi(hand: Iterable[str]) -> tuple[int, tuple[str, ...]] | None:
    """(value, cards shown), or None when tarocchi cannot be declared."""
    cards = set(hand)
    trumps = sorted((c for c in cards if is_trump(c)), key=trump_number)
    if len(trumps) >= 10:
        return 10 + len(trumps) - 10, tuple(trumps)
    if len(trumps) == 9 and FOOL in cards:
        return 10, (*trumps, FOOL)
    return None


def best_honour_part(hand: Iterable[str]) -> dict[str, int]:
    """The single best set of §6's table, name -> value; {} when nothing can be declared."""
    held = set(hand) & set(HONOURS)
    h = len(held)
    if h == len(HONOURS):
        return {"kings": 20, "mitigati": 15}
    if held >= KINGS:
        return {"kings": 20 + 5 * (h - 4)}
    if held >= MITIGATI:
        return {"mitigati": 15 + 5 * (h - 3)}
    if h >= 4:
        return {"honours": 10 + 5 * (h - 4)}
    return {}


def declarations_of(seat: int, hand: tuple[str, ...], names: tuple[str, ...]) -> tuple[Declaration, ...]:
    """The declared combinations with their values, or ``bad_declaration``."""
    if len(set(names)) != len(names):
        raise BadDeclaration("A combination is named twice.")
    result: list[Declaration] = []
    if "tarocchi" in names:
        held = tarocchi(hand)
        if held is None:
            raise BadDeclaration(f"Seat {seat} does not hold ten trumps (or nine and the Fool).")
        result.append(Declaration(seat=seat, name="tarocchi", value=held[0], shown=held[1]))
    honour_part = {n for n in names if n != "tarocchi"}
    best = best_honour_part(hand)
    if honour_part and honour_part != set(best):
        wanted = " and ".join(sorted(best, key=ORDER.__getitem__)) or "nothing"
        raise BadDeclaration(f"Seat {seat}'s honour part must be the best set it holds: {wanted}.")
    result.extend(Declaration(seat=seat, name=n, value=best[n])
                  for n in sorted(honour_part, key=ORDER.__getitem__))
    return tuple(result)


def legal_declarations(hand: tuple[str, ...]) -> list[tuple[Combination, ...]]:
    """Every accepted list (in canonical order): nothing, tarocchi, the honour part, both."""
    honours = best_honour_part(hand)
    best = tuple(name for name in COMBINATIONS if name in honours)  # COMBINATIONS is the canonical order
    taro: tuple[tuple[Combination, ...], ...] = (("tarocchi",),) if tarocchi(hand) else ()
    options: list[tuple[Combination, ...]] = [(), *taro]
    if best:
        options.append(best)
        options.extend(t + best for t in taro)
    return options


def decide_declare(state: Declaring, cmd: Declare) -> list[Declared]:
    declared = declarations_of(cmd.seat, state.hands[cmd.seat], cmd.combinations)
    return [Declared(seat=cmd.seat, declarations=declared)]


def apply_declared(state: Declaring, event: Declared) -> Declaring | Playing:
    declarations = state.declarations + event.declarations
    if state.declared + 1 < 3:
        return Declaring(rules=state.rules, dealer=state.dealer, hand_no=state.hand_no,
                         packets=state.packets, rounds_dealt=state.rounds_dealt, hands=state.hands,
                         discards=state.discards, declarations=declarations,
                         to_act=right_of(event.seat), declared=state.declared + 1)
    leader = right_of(state.dealer)
    return Playing(rules=state.rules, dealer=state.dealer, hand_no=state.hand_no,
                   packets=state.packets, rounds_dealt=state.rounds_dealt, hands=state.hands,
                   discards=state.discards, declarations=declarations,
                   won=((), (), ()), leader=leader, to_act=leader)

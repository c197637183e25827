"""Scoring (rules/mighty.md §6, §7): fixed, pagat and the penalty tally."""

from __future__ import annotations

from domain.cards import points_of
from domain.rules import RuleSet


def is_made(contract: int, declarer_side_points: int) -> bool:
    return declarer_side_points >= contract


def base_stake(rules: RuleSet, contract: int) -> int:
    """``b = C - 12`` in mighty-5 (13 -> 1, 20 -> 8); each variant has its own offset."""
    return contract - rules.spec.base_offset


def pagat_stake(rules: RuleSet, contract: int, trump: str, taken: int, alone: bool) -> int:
    """pagat's S: overtricks when made, undertricks when failed, doubled per feature."""
    if taken >= contract:
        stake = 2 * (contract - rules.spec.min_bid) + (taken - contract)
    else:
        stake = contract - taken
    total = points_of(rules.spec.deck)
    run, back_run = taken == total, taken <= total // 2 - 1  # P = 20; P <= 9
    for doubles in (run, back_run, trump == "NT", alone):
        if doubles:
            stake *= 2
    return stake


def hand_scores(
    rules: RuleSet, *, declarer: int, friend: int | None, contract: int, trump: str, taken: int
) -> tuple[int, ...]:
    """Each seat's score for one hand, in seat order."""
    players = rules.spec.players
    made = is_made(contract, taken)
    if rules.score == "penalty":
        return _penalty_scores(rules, players, declarer, friend, contract, made)
    alone = friend is None
    if rules.score == "pagat":
        stake = pagat_stake(rules, contract, trump, taken, alone)
    else:
        stake = base_stake(rules, contract)
    sign = 1 if made else -1
    pay = rules.spec.payout
    scores = [0] * players
    for seat in range(players):
        if seat == declarer:
            scores[seat] = sign * stake * (pay.alone_declarer if alone else pay.declarer)
        elif seat == friend:
            scores[seat] = sign * stake * pay.friend
        else:
            scores[seat] = -sign * stake * (pay.alone_defender if alone else pay.defender)
    return tuple(scores)


def _penalty_scores(
    rules: RuleSet, players: int, declarer: int, friend: int | None, contract: int, made: bool
) -> tuple[int, ...]:
    """The Russian tally: nobody gains; defenders pay when made, the declarer's side when not."""
    stake = base_stake(rules, contract)
    side = {declarer} if friend is None else {declarer, friend}
    return tuple(
        (-stake if seat not in side else 0) if made else (-stake if seat in side else 0)
        for seat in range(players)
    )

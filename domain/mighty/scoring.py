"""Scoring (docs/rules/mighty.md §6, §7): fixed, pagat and the penalty tally."""

from __future__ import annotations

from domain.mighty.cards import points_of
from domain.mighty.rules import RuleSet


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
    # a run: P = 20 (40); a back run: the defenders take 11 (22) or more, P <= 9 (18)
    run, back_run = taken == total, taken <= total * 9 // 20
    for doubles in (run, back_run, trump == "NT", alone):
        if doubles:
            stake *= 2
    return stake


def hand_scores(
    rules: RuleSet, *, declarer: int, friend: int | None = None, contract: int, trump: str,
    taken: int, friends: tuple[int, ...] | None = None,
) -> tuple[int, ...]:
    """Each seat's score for one hand, in seat order. ``friends``: every distinct friend
    (docs/rules/mighty.md §10: up to two); ``friend`` is the one-friend shorthand."""
    if friends is None:
        friends = () if friend is None else (friend,)
    players = rules.spec.players
    made = is_made(contract, taken)
    if rules.score == "penalty":
        return _penalty_scores(rules, players, declarer, friends, contract, made)
    alone = not friends
    if rules.score == "pagat":
        stake = pagat_stake(rules, contract, trump, taken, alone)
    else:
        stake = base_stake(rules, contract)
    sign = 1 if made else -1
    if rules.spec.packs > 1:
        return _shared_scores(players, declarer, friends, sign * stake)
    friend = friends[0] if friends else None
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


def _shared_scores(players: int, declarer: int, friends: tuple[int, ...], won: int) -> tuple[int, ...]:
    """docs/rules/mighty.md §10.6 fixed/pagat: with k friends and d = n - 1 - k defenders, each
    defender -won, each friend +won, the declarer (d - k) * won: zero-sum."""
    k = len(friends)
    d = players - 1 - k
    return tuple(
        (d - k) * won if seat == declarer else won if seat in friends else -won
        for seat in range(players)
    )


def _penalty_scores(
    rules: RuleSet, players: int, declarer: int, friends: tuple[int, ...], contract: int, made: bool
) -> tuple[int, ...]:
    """The Russian tally: nobody gains; defenders pay when made, the declarer's side when
    not (each distinct friend once)."""
    stake = base_stake(rules, contract)
    side = {declarer, *friends}
    return tuple(
        (-stake if seat not in side else 0) if made else (-stake if seat in side else 0)
        for seat in range(players)
    )

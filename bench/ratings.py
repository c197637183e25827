"""`mighty bench ratings`: are the ratings calibrated, and do they sort the bots' levels?

Hands are played in-process by the bots through the table aggregate (``domain.table``
decide/evolve, a fresh table per hand, as ``bench/bots.py``), and each hand's events are
folded by the service's own projection (``projections.ratings.HandsProjection``) into the
``RatedHand`` the ratings read: its sides and ranks are exactly what the live worker
rates. No Redis.

1. **Calibration**, per game (``--games``, default mighty-5 and mitigati): ``--hands``
   hands among a population of players of mixed levels (``--population``), seats drawn at
   random each hand. Before each hand, every treatment (``sum``: openskill's own side
   strength, the sum of the players' means; ``mean``: each player weighted 1/size, the
   side's average) predicts the chance that a side finishes first (Mighty: the declarer's
   side; Mitigati: every player), then rates the hand. Printed per treatment: per decile
   of the predicted chance, how many predictions fell in it, their mean and the rate
   observed; the Brier score and the log loss over all predictions.
2. **Ladder**: ``--ladder`` rated hands of mighty-5 between ``--experts`` expert and
   ``--beginners`` beginner players (seats drawn at random), under the chosen treatment:
   every player's ordinal, and whether every expert ends above every beginner.

Prints one JSON object. Figures and the choice they made: docs/ratings.md.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from collections.abc import Mapping, Sequence
from typing import Any

from bench.bots import policies
from domain.bots import Budget
from domain.prng import Rng
from domain.registry import game_named
from domain.table import (
    CreateTable,
    DealHand,
    JoinSeat,
    StartTable,
    Submission,
    TableEvent,
    TableState,
    decide,
    evolve,
    initial_state,
)
from projections.ratings import (
    HANDS_DOC,
    TREATMENT,
    HandsProjection,
    PlayerRating,
    RatedHand,
    Ratings,
    Treatment,
    decode_hand,
    win_chances,
)

TREATMENTS: tuple[Treatment, ...] = ("sum", "mean")


def play(variant: str, names: Sequence[str], levels: Sequence[str], seed: int, budget: Budget,
         clock: int) -> RatedHand | None:
    """One hand at a fresh table, seat ``s`` held by ``names[s]`` and played at
    ``levels[s]``; the hand as the ratings projection folds it (None: it ended without a
    ledger line, e.g. passed out)."""
    game = game_named(variant)
    rng = Rng(seed)
    table = initial_state(f"bench-{seed}")
    projection = HandsProjection()
    version = 0

    def apply(state: TableState, submission: Submission) -> TableState:
        nonlocal version
        events: list[TableEvent] = list(decide(state, submission))
        for event in events:
            version += 1
            state = evolve(state, event)
            projection.apply(state.table_id, version, event, clock)
        return state

    table = apply(table, Submission(CreateTable(variant=variant), names[0]))
    for seat, name in enumerate(names):
        table = apply(table, Submission(JoinSeat(seat=seat), name))
    rules = table.rules
    order = list(game.deck(rules))
    rng.shuffle(order)
    table = apply(table, Submission(StartTable(first_dealer=rng.below(len(names))), names[0]))
    table = apply(table, Submission(DealHand(order=tuple(order), salt="bench")))
    bots = policies(game)
    while not table.awaiting_deal:
        hand = table.hand
        assert hand is not None
        actor = game.to_act(hand)
        assert actor is not None
        command = bots[levels[actor]](rules, game.seat_view(hand, actor), rng.next(), budget)
        table = apply(table, Submission(command, names[actor]))
    hands = [decode_hand(data) for key, data in projection.flush().items()
             if key.name.startswith(HANDS_DOC) and data is not None]
    return hands[0] if hands else None


def population(spec: str) -> list[tuple[str, str]]:
    """``random:4,beginner:4`` -> [(name, level)], names ``<level>-<i>``."""
    players = []
    for part in spec.split(","):
        level, count = part.split(":")
        players += [(f"{level}-{i}", level) for i in range(int(count))]
    return players


def _outcomes(hand: RatedHand, chances: Sequence[float], first_side_only: bool) -> list[tuple[float, int]]:
    """(predicted chance, 1 if that side alone finished first) per side predicted."""
    sides = range(1 if first_side_only else len(hand.sides))
    return [(chances[i], int(hand.ranks[i] == 0 and hand.ranks.count(0) == 1)) for i in sides]


def calibration(pairs: Sequence[tuple[float, int]]) -> dict[str, Any]:
    deciles: list[dict[str, Any]] = []
    for d in range(10):
        lo, hi = d / 10, (d + 1) / 10
        inside = [(p, o) for p, o in pairs if lo <= p < hi or (d == 9 and p == 1.0)]
        deciles.append({"decile": f"{lo:.1f}-{hi:.1f}", "n": len(inside),
                        "predicted": round(sum(p for p, _ in inside) / len(inside), 3) if inside else None,
                        "observed": round(sum(o for _, o in inside) / len(inside), 3) if inside else None})
    n = len(pairs) or 1
    brier = sum((p - o) ** 2 for p, o in pairs) / n
    eps = 1e-9
    logloss = -sum(o * math.log(max(p, eps)) + (1 - o) * math.log(max(1 - p, eps)) for p, o in pairs) / n
    return {"predictions": len(pairs), "brier": round(brier, 4), "log_loss": round(logloss, 4), "deciles": deciles}


def run_calibration(variant: str, hands: int, spec: str, seed: int, budget: Budget) -> dict[str, Any]:
    game = game_named(variant)
    seats = game.players(game.make_rules(variant, {}))
    players = population(spec)
    rng = Rng(seed)
    raters = {t: Ratings(t) for t in TREATMENTS}
    pairs: dict[str, list[tuple[float, int]]] = {t: [] for t in TREATMENTS}
    sizes: dict[str, int] = {}
    played = 0
    clock = 0
    started = time.perf_counter()
    while played < hands:
        drawn = list(players)
        rng.shuffle(drawn)
        drawn = drawn[:seats]
        clock += 1
        hand = play(variant, [n for n, _ in drawn], [lv for _, lv in drawn], rng.next(), budget, clock)
        if hand is None or len(hand.sides) < 2:
            continue
        played += 1
        shape = "v".join(str(len(side)) for side in hand.sides)
        sizes[shape] = sizes.get(shape, 0) + 1
        for treatment, rater in raters.items():
            sides = [[rater.rating(hand.rules, hand.players[s] or "") for s in side] for side in hand.sides]
            chances = win_chances(rater.model, sides, treatment)
            pairs[treatment] += _outcomes(hand, chances, first_side_only=len(hand.sides) == 2)
            rater.apply(hand)
    return {"game": variant, "hands": played, "population": spec, "sides": sizes,
            "seconds": round(time.perf_counter() - started, 1),
            "treatments": {t: calibration(pairs[t]) for t in TREATMENTS}}


def run_ladder(hands: int, experts: int, beginners: int, seed: int, budget: Budget,
               treatment: Treatment, variant: str = "mighty-5") -> dict[str, Any]:
    game = game_named(variant)
    seats = game.players(game.make_rules(variant, {}))
    players = [(f"expert-{i}", "expert") for i in range(experts)] + \
              [(f"beginner-{i}", "beginner") for i in range(beginners)]
    rng = Rng(seed)
    rater = Ratings(treatment)
    played, clock = 0, 0
    started = time.perf_counter()
    while played < hands:
        drawn = list(players)
        rng.shuffle(drawn)
        drawn = drawn[:seats]
        clock += 1
        hand = play(variant, [n for n, _ in drawn], [lv for _, lv in drawn], rng.next(), budget, clock)
        if hand is None:
            continue
        played += 1
        rater.apply(hand)
    final: Mapping[str, PlayerRating] = {name: rater.rating(variant, name) for name, _ in players}
    lowest_expert = min(final[f"expert-{i}"].ordinal for i in range(experts))
    highest_beginner = max(final[f"beginner-{i}"].ordinal for i in range(beginners))
    return {"game": variant, "hands": played, "treatment": treatment,
            "seconds": round(time.perf_counter() - started, 1),
            "players": {name: {"ordinal": round(r.ordinal, 3), "mu": round(r.mu, 3), "sigma": round(r.sigma, 3),
                               "hands": r.hands} for name, r in sorted(final.items(), key=lambda kv: -kv[1].ordinal)},
            "experts_above_beginners": lowest_expert > highest_beginner}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench ratings", description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, default=2000, help="calibration hands per game")
    parser.add_argument("--games", default="mighty-5,mitigati")
    parser.add_argument("--population", default="random:4,beginner:4,expert:2",
                        help="the calibration's players, level:count,...")
    parser.add_argument("--ladder", type=int, default=200, help="rated hands of experts against beginners (0: none)")
    parser.add_argument("--experts", type=int, default=3)
    parser.add_argument("--beginners", type=int, default=3)
    parser.add_argument("--playouts", type=int, default=8, help="the expert's playouts per decision")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    args = parser.parse_args(argv)
    budget = Budget(playouts=args.playouts)
    out: dict[str, Any] = {"bench": "ratings", "python": platform.python_version(), "playouts": args.playouts,
                           "chosen": TREATMENT, "calibration": [], "ladder": None}
    for i, variant in enumerate(v for v in args.games.split(",") if v):
        out["calibration"].append(run_calibration(variant, args.hands, args.population, args.seed + i, budget))
    if args.ladder:
        out["ladder"] = run_ladder(args.ladder, args.experts, args.beginners, args.seed, budget, TREATMENT)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

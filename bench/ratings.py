"""`mighty bench ratings`: are the ratings calibrated, and do they sort the bots' levels?

Hands are played in-process by the bots through the table aggregate (``domain.table``
decide/evolve, a fresh table per hand, as ``bench/bots.py``), and each hand's events are
folded by the service's own projection (``projections.ratings.HandsProjection``) into the
``RatedHand`` the ratings read: its sides, ranks and declarers are exactly what the live
worker rates. No Redis. The hands are played **once** into a cache (``--cache``, one
JSON line a deal; deal ``i`` depends only on the seed and ``i``, so a run cut short is
finished by the same command), and every treatment is measured over the same file.

1. **Calibration**, per game (``--games``, default mighty-5 and mitigati): ``--hands``
   hands among a population of players of mixed levels (``--population``), seats drawn at
   random each hand. Before each hand, every treatment (``--treatments``, at each
   multiple of openskill's default beta ``--betas`` and each declarer's share
   ``--shares``) predicts the chance that a side finishes first (Mighty: the declaring
   side; Mitigati: every player), raw and as the rule set's learned ``Calibration``
   (``, calibrated``: temperature and bias learned from the earlier hands only), then
   rates the hand. Printed per treatment: per decile
   of the predicted chance, how many predictions fell in it, their mean and the rate
   observed; the Brier score, the log loss and the largest gap.
2. **Ladder**: ``--ladder`` rated hands of each of ``--ladder-games`` between
   ``--experts`` experts (at ``--ladder-playouts``, by default their full budget) and
   ``--beginners`` beginners (seats drawn at random), under every treatment: every
   player's ordinal, and whether every expert ends above every beginner.

Prints one JSON object. Figures and the choice they made: docs/ratings.md.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

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
    BETA,
    DECLARER_SHARE,
    HANDS_DOC,
    SIGMA,
    TREATMENT,
    HandsProjection,
    PlayerRating,
    RatedHand,
    Ratings,
    Treatment,
    decode_hand,
)

TREATMENTS: tuple[Treatment, ...] = ("sum", "mean", "sum-edge", "mean-edge", "declarer-edge")


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


def record(path: Path, variant: str, spec: str, hands: int, seed: int, budget: Budget) -> list[RatedHand]:
    """Play ``hands`` hands of ``variant`` among the population ``spec`` (seats drawn at
    random each hand) into the cache ``path``, one line per deal (``null``: it ended
    without a ledger line), and return the hands. Deal ``i`` depends only on ``seed`` and
    ``i``, so a cache cut short is finished by running the same command again; the hands
    are played once and every treatment is measured over the same file."""
    game = game_named(variant)
    seats = game.players(game.make_rules(variant, {}))
    players = population(spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = path.read_bytes().splitlines() if path.exists() else []
    cached = [None if line == b"null" else decode_hand(line) for line in lines]
    with path.open("ab") as out:
        while sum(1 for h in cached if h is not None and len(h.sides) >= 2) < hands:
            rng = Rng(seed * 1_000_003 + len(cached))
            drawn = list(players)
            rng.shuffle(drawn)
            drawn = drawn[:seats]
            hand = play(variant, [n for n, _ in drawn], [lv for _, lv in drawn], rng.next(), budget,
                        len(cached) + 1)
            cached.append(hand)
            out.write(b"null\n" if hand is None else msgspec.json.encode(hand) + b"\n")
            out.flush()
    return [h for h in cached if h is not None and len(h.sides) >= 2][:hands]


# the cache's format: bumped whenever RatedHand gains a field (an old cache would read
# it as its default); v2: ``declarers``
CACHE_FORMAT = "v2"


def cache_path(directory: Path, variant: str, spec: str, seed: int, playouts: int | None) -> Path:
    budget = "default" if playouts is None else str(playouts)
    name = f"{variant}_{spec.replace(':', '').replace(',', '_')}_s{seed}_p{budget}_{CACHE_FORMAT}.jsonl"
    return directory / name


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
    gaps = [(abs(d["predicted"] - d["observed"]), d["n"]) for d in deciles if d["n"]]
    return {"predictions": len(pairs), "brier": round(brier, 4), "log_loss": round(logloss, 4),
            "worst_gap": round(max(g for g, _ in gaps), 3) if gaps else None,
            "worst_gap_n30": round(max((g for g, n in gaps if n >= 30), default=0.0), 3),
            "deciles": deciles}


def rater_name(treatment: Treatment, scale: float, share: float) -> str:
    name = treatment if scale == 1.0 else f"{treatment}, beta x{scale:g}"
    return f"{name}, share {share:g}" if treatment == "declarer-edge" else name


def raters_of(treatments: Sequence[Treatment], scales: Sequence[float], shares: Sequence[float]) -> dict[str, Ratings]:
    """A fresh ``Ratings`` per treatment, multiple of openskill's default beta and (for
    ``declarer-edge``) declarer's share, by name."""
    return {rater_name(t, k, w): Ratings(t, SIGMA / 2 * k, w) for t in treatments for k in scales
            for w in (shares if t == "declarer-edge" else shares[:1])}


def run_calibration(variant: str, hands: Sequence[RatedHand], spec: str,
                    treatments: Sequence[Treatment] = TREATMENTS, scales: Sequence[float] = (1.0,),
                    shares: Sequence[float] = (DECLARER_SHARE,)) -> dict[str, Any]:
    """Each treatment (at each multiple ``scales`` of openskill's default beta, each
    declarer's share) folds the cached hands in order; before each hand it predicts the
    chance that a side finishes first (two sides: the declarer's, the first; more: each)."""
    raters = raters_of(treatments, scales, shares)
    names = [n for name in raters for n in (name, f"{name}, calibrated")]
    pairs: dict[str, list[tuple[float, int]]] = {name: [] for name in names}
    sizes: dict[str, int] = {}
    started = time.perf_counter()
    for hand in hands:
        shape = "v".join(str(len(side)) for side in hand.sides)
        sizes[shape] = sizes.get(shape, 0) + 1
        for treatment, rater in raters.items():
            for name, calibrated in ((treatment, False), (f"{treatment}, calibrated", True)):
                chances = rater.win_chances(hand, calibrated)
                pairs[name] += _outcomes(hand, chances, first_side_only=len(hand.sides) == 2)
            rater.apply(hand)
    return {"game": variant, "hands": len(hands), "population": spec, "sides": sizes,
            "seconds": round(time.perf_counter() - started, 1),
            "treatments": {name: calibration(pairs[name]) for name in names},
            "learned": {name: msgspec.structs.asdict(rater.calibration(variant)) for name, rater in raters.items()}}


def run_ladder(variant: str, hands: Sequence[RatedHand], spec: str, label: str, rater: Ratings) -> dict[str, Any]:
    """The cached hands among experts and beginners rated by ``rater``: every player's
    ordinal, and whether every expert ends above every beginner."""
    for hand in hands:
        rater.apply(hand)
    names = [name for name, _ in population(spec)]
    final: Mapping[str, PlayerRating] = {name: rater.rating(variant, name) for name in names}
    experts = [r.ordinal for name, r in final.items() if name.startswith("expert-")]
    beginners = [r.ordinal for name, r in final.items() if name.startswith("beginner-")]
    return {"game": variant, "hands": len(hands), "population": spec, "treatment": label,
            "players": {name: {"ordinal": round(r.ordinal, 3), "mu": round(r.mu, 3), "sigma": round(r.sigma, 3),
                               "hands": r.hands} for name, r in sorted(final.items(), key=lambda kv: -kv[1].ordinal)},
            "experts_above_beginners": min(experts) > max(beginners) if experts and beginners else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench ratings", description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, default=2000, help="calibration hands per game")
    parser.add_argument("--games", default="mighty-5,mitigati")
    parser.add_argument("--population", default="beginner:6,expert:4",
                        help="the calibration's players, level:count,...")
    parser.add_argument("--ladder", type=int, default=200, help="rated hands of experts against beginners (0: none)")
    parser.add_argument("--ladder-games", default="mighty-5,mitigati")
    parser.add_argument("--experts", type=int, default=3)
    parser.add_argument("--beginners", type=int, default=3)
    parser.add_argument("--playouts", type=int, default=8, help="the expert's playouts per decision, calibration")
    parser.add_argument("--ladder-playouts", type=int, default=None,
                        help="the expert's playouts per decision in the ladder (default: the game's, its full budget)")
    parser.add_argument("--treatments", default=",".join(TREATMENTS))
    parser.add_argument("--betas", default="1",
                        help="multiples of openskill's default beta (SIGMA / 2) to measure each treatment at")
    parser.add_argument("--shares", default=str(DECLARER_SHARE),
                        help="the declarer's shares of their side to measure declarer-edge at")
    parser.add_argument("--cache", type=Path, default=Path(".bench-cache/ratings"),
                        help="where the played hands are kept (played once, measured again and again)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", choices=("calibration", "ladder"), default=None)
    parser.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    args = parser.parse_args(argv)
    treatments = tuple(t for t in TREATMENTS if t in args.treatments.split(","))
    scales = [float(k) for k in args.betas.split(",")]
    shares = [float(w) for w in args.shares.split(",")]
    out: dict[str, Any] = {"bench": "ratings", "python": platform.python_version(), "playouts": args.playouts,
                           "ladder_playouts": args.ladder_playouts, "chosen": TREATMENT, "beta": BETA, "declarer_share": DECLARER_SHARE,
                           "calibration": [], "ladder": []}
    if args.only != "ladder":
        for i, variant in enumerate(v for v in args.games.split(",") if v):
            path = cache_path(args.cache, variant, args.population, args.seed + i, args.playouts)
            hands = record(path, variant, args.population, args.hands, args.seed + i,
                           Budget(playouts=args.playouts))
            out["calibration"].append(run_calibration(variant, hands, args.population, treatments, scales, shares))
    if args.ladder and args.only != "calibration":
        spec = f"expert:{args.experts},beginner:{args.beginners}"
        for variant in (v for v in args.ladder_games.split(",") if v):
            path = cache_path(args.cache, variant, spec, args.seed, args.ladder_playouts)
            hands = record(path, variant, spec, args.ladder, args.seed, Budget(playouts=args.ladder_playouts))
            out["ladder"].extend(run_ladder(variant, hands, spec, name, rater)
                                 for name, rater in raters_of(treatments, scales, shares).items())
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`mighty bench bots`: the bots' ladder, duplicate deals through the real table.

For each pair ``a:b`` and each deal (a seeded shuffle), the hand is played once per
rotation of the seats: in rotation ``r`` seat ``s`` is played by ``a`` when
``(s + r) % n < n // 2`` and by ``b`` otherwise, so over the rotations every seat holds
every hand under both levels and the luck of the deal cancels out. Every hand runs
through the table aggregate (``domain.table`` decide/evolve): a fresh table per hand, the
deal sent as the service sends it, each bot given only its seat's view
(``Game.seat_view``). Prints one JSON object:

- per pair: ``a_avg`` / ``b_avg``, the average score per hand of a seat played by that
  level, and ``diff_ci95``, the 95% interval of ``a_avg - b_avg`` from the per-deal paired
  differences (normal approximation);
- per level: how often its seats became the declarer and made the contract (Mighty), and
  its decision times at the budget given: p50 and p99 of the CPU time the decision took
  (its cost on one core, whatever else the machine runs), and the wall-clock p99.

``--record FILE`` keeps each deal's outcome as one JSON line the moment the deal is done,
and a run given a file that already holds some of its deals (same game, pair, budget and
seed) plays only the others: a ladder of thousands of hands survives an interrupted run
and can be finished later, or on another machine, with the same report.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, TextIO

from domain.bots import Budget
from domain.games import AnyGame
from domain.prng import Rng
from domain.registry import game_named
from domain.table import (
    CreateTable,
    DealHand,
    JoinSeat,
    StartTable,
    Submission,
    TableState,
    decide,
    evolve,
    initial_state,
)


def policies(game: AnyGame) -> Mapping[str, Any]:
    """Level -> policy for a game (``Game.bots``)."""
    return game.bots()


def _apply(table: TableState, submission: Submission) -> TableState:
    for event in decide(table, submission):
        table = evolve(table, event)
    return table


def play_hand(variant: str, order: tuple[str, ...], dealer: int, levels: Sequence[str],
              seed: int, budget: Budget) -> dict[str, Any]:
    """One hand at a fresh table, seat ``s`` played by ``levels[s]``."""
    game = game_named(variant)
    table = _apply(initial_state("bench"), Submission(CreateTable(variant=variant), "p0"))
    names = [f"p{s}" for s in range(len(levels))]
    for seat, name in enumerate(names):
        table = _apply(table, Submission(JoinSeat(seat=seat), name))
    table = _apply(table, Submission(StartTable(first_dealer=dealer), names[0]))
    table = _apply(table, Submission(DealHand(order=order, salt="bench")))
    bots = policies(game)
    rules = table.rules
    rng = Rng(seed)
    times: dict[str, list[float]] = {}  # CPU time of this thread: one core's cost
    walls: dict[str, list[float]] = {}  # wall time: what a player waits on a shared machine
    while not table.awaiting_deal:
        hand = table.hand
        assert hand is not None
        actor = game.to_act(hand)
        assert actor is not None
        seat = actor
        view = game.seat_view(hand, seat)
        started, cpu = time.perf_counter(), time.thread_time()
        command = bots[levels[seat]](rules, view, rng.next(), budget)
        times.setdefault(levels[seat], []).append(time.thread_time() - cpu)
        walls.setdefault(levels[seat], []).append(time.perf_counter() - started)
        table = _apply(table, Submission(command, names[seat]))
    hand = table.hand
    scored = getattr(hand, "scored", None)
    declarer = getattr(hand, "declarer", None) if scored is not None else None
    return {"scores": list(table.totals), "declarer": declarer,
            "made": None if scored is None else scored.made, "times": times, "walls": walls}


def levels_for(a: str, b: str, players: int, rotation: int) -> list[str]:
    return [a if (s + rotation) % players < players // 2 else b for s in range(players)]


def run_deals(variant: str, a: str, b: str, deals: Sequence[int], budget: Budget) -> list[dict[str, Any]]:
    """Every rotation of each deal (a seed); per deal the paired means and the stats."""
    game = game_named(variant)
    rules = game.make_rules(variant, {})
    n = game.players(rules)
    out = []
    for deal in deals:
        rng = Rng(deal)
        order = list(game.deck(rules))
        rng.shuffle(order)
        dealer = rng.below(n)
        sums = {"a": 0.0, "b": 0.0}
        counts = {"a": 0, "b": 0}
        stats: dict[str, dict[str, Any]] = {}
        for rotation in range(n):
            levels = levels_for(a, b, n, rotation)
            hand = play_hand(variant, tuple(order), dealer, levels, rng.next(), budget)
            for seat, level in enumerate(levels):
                key = "a" if (seat + rotation) % n < n // 2 else "b"
                sums[key] += hand["scores"][seat]
                counts[key] += 1
                s = stats.setdefault(level, _fresh())
                s["seat_hands"] += 1
                if hand["declarer"] == seat:
                    s["declarer"] += 1
                    s["made"] += int(bool(hand["made"]))
            for kind in ("times", "walls"):
                for level, times in hand[kind].items():
                    stats.setdefault(level, _fresh())[kind].extend(times)
        out.append({"deal": deal, "a": sums["a"] / counts["a"], "b": sums["b"] / counts["b"],
                    "stats": stats})
    return out


def deal_seeds(seed: int, pair_index: int, deals: int) -> list[int]:
    """The deals a pair plays: fixed by ``--seed`` and the pair's place in ``--pairs``."""
    return [seed * 1_000_003 + pair_index * 100_000 + i for i in range(deals)]


def record_key(variant: str, a: str, b: str, playouts: int | None) -> dict[str, Any]:
    """What a recorded deal must match to count for a run (its seed besides)."""
    return {"game": variant, "pair": f"{a}:{b}", "playouts": playouts}


def recorded_deals(lines: Iterable[str], key: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    """The deals of one pair already in a record, by seed; lines of other runs are left."""
    found: dict[int, dict[str, Any]] = {}
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by an interrupted run: that deal is played again
        if isinstance(entry, dict) and all(entry.get(k) == v for k, v in key.items()):
            found[int(entry["deal"])] = entry
    return found


def _fresh() -> dict[str, Any]:
    return {"seat_hands": 0, "declarer": 0, "made": 0, "times": [], "walls": []}


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarize(variant: str, pairs: list[tuple[str, str]], results: dict[tuple[str, str], list[dict[str, Any]]],
              players: int) -> dict[str, Any]:
    report: dict[str, Any] = {"game": variant, "pairs": [], "levels": {}}
    merged: dict[str, dict[str, Any]] = {}
    total_hands = 0
    for a, b in pairs:
        deals = results[(a, b)]
        diffs = [d["a"] - d["b"] for d in deals]
        k = len(diffs)
        mean = sum(diffs) / k
        sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / (k - 1)) if k > 1 else 0.0
        half = 1.96 * sd / math.sqrt(k) if k > 1 else None
        hands = k * players
        total_hands += hands
        report["pairs"].append({
            "a": a, "b": b, "hands": hands, "deals": k,
            "a_avg": round(sum(d["a"] for d in deals) / k, 3),
            "b_avg": round(sum(d["b"] for d in deals) / k, 3),
            "diff_ci95": None if half is None else [round(mean - half, 3), round(mean + half, 3)],
        })
        for d in deals:
            for level, s in d["stats"].items():
                m = merged.setdefault(level, _fresh())
                for key in ("seat_hands", "declarer", "made"):
                    m[key] += s[key]
                m["times"].extend(s["times"])
                m["walls"].extend(s["walls"])
    report["hands"] = total_hands
    for level, m in merged.items():
        entry: dict[str, Any] = {
            "decision_p50_ms": round(_percentile(m["times"], 0.5) * 1000, 2),
            "decision_p99_ms": round(_percentile(m["times"], 0.99) * 1000, 2),
            "decision_wall_p99_ms": round(_percentile(m["walls"], 0.99) * 1000, 2),
            "decisions": len(m["times"]),
        }
        if variant != "mitigati":
            entry["declarer_rate"] = round(m["declarer"] / max(1, m["seat_hands"]), 3)
            entry["contract_rate"] = round(m["made"] / m["declarer"], 3) if m["declarer"] else None
        report["levels"][level] = entry
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench bots")
    parser.add_argument("--game", default="mighty-5", help="a Mighty variant or mitigati")
    parser.add_argument("--hands", type=int, default=None,
                        help="hands per pair (deals x seat rotations; default 200); with --tables, per table (default 1)")
    parser.add_argument("--pairs", default="beginner:random,expert:beginner")
    parser.add_argument("--playouts", type=int, default=None, help="the expert's budget (default: the game's)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", default="1",
                        help="processes: the ladder's (the machine has 2 cores); with --tables the bot workers', "
                             "a list to compare (1,2: 1, 2, 1, 2... workers, --rounds times)")
    service = parser.add_argument_group("the service's bot workers (--tables)")
    service.add_argument("--tables", type=int, default=None,
                         help="measure the bot workers instead: this many tables of bots, --hands hands each")
    service.add_argument("--level", default="expert", help="the bots' level at those tables")
    service.add_argument("--rounds", type=int, default=1, help="times each --workers count runs, alternating")
    service.add_argument("--timeout-s", type=float, default=1800.0, help="a run's limit")
    parser.add_argument("--json", action="store_true", help="print one JSON object (the only output)")
    parser.add_argument("--record", metavar="FILE", default=None,
                        help="append each finished deal to FILE (JSON lines); deals already there are not played again")
    args = parser.parse_args(argv)
    try:
        workers = [int(w) for w in args.workers.split(",")]
    except ValueError:
        workers = []
    if not workers or min(workers) < 1:
        parser.error("--workers takes a count, or counts separated by commas")
    game = game_named(args.game)
    rules = game.make_rules(args.game, {})
    players = game.players(rules)
    if args.tables is not None:
        if args.level not in policies(game) or args.tables < 1 or args.rounds < 1:
            parser.error(f"--tables and --rounds take a count, --level one of {', '.join(sorted(policies(game)))}")
        return _service(args, workers)
    if len(workers) > 1:
        parser.error("the ladder takes one --workers count")
    args.workers = workers[0]
    args.hands = 200 if args.hands is None else args.hands
    pairs = [tuple(p.split(":", 1)) for p in args.pairs.split(",") if p]
    known = set(policies(game))
    for pair in pairs:
        if len(pair) != 2 or not set(pair) <= known:
            parser.error(f"--pairs takes level:level with levels {', '.join(sorted(known))}")
    deals_per_pair = max(1, args.hands // players)
    budget = Budget(playouts=args.playouts)
    started = time.perf_counter()
    record_path = Path(args.record) if args.record else None
    old_text = record_path.read_text() if record_path and record_path.exists() else ""
    old_lines = old_text.splitlines()
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    todo: list[tuple[tuple[str, str], list[int]]] = []
    for index, (a, b) in enumerate(pairs):
        seeds = deal_seeds(args.seed, index, deals_per_pair)
        have = recorded_deals(old_lines, record_key(args.game, a, b, args.playouts))
        results[(a, b)] = [have[s] for s in seeds if s in have]
        todo += [((a, b), [s]) for s in seeds if s not in have]
    record = record_path.open("a") if record_path else None
    if record is not None and old_text and not old_text.endswith("\n"):
        record.write("\n")  # after a line cut short, the next deal starts a line of its own
    try:
        with ProcessPoolExecutor(max_workers=args.workers) if args.workers > 1 else _Inline() as pool:
            futures: dict[Any, tuple[str, str]] = {
                pool.submit(run_deals, args.game, a, b, chunk, budget): (a, b) for (a, b), chunk in todo}
            for future in as_completed(futures) if args.workers > 1 else list(futures):
                a, b = futures[future]
                for deal in future.result():
                    results[(a, b)].append(deal)
                    _write(record, {**record_key(args.game, a, b, args.playouts), **deal})
    finally:
        if record is not None:
            record.close()
    for deals in results.values():
        deals.sort(key=lambda d: d["deal"])
    report = summarize(args.game, [(a, b) for a, b in pairs], results, players)
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["workers"] = args.workers
    report["python"] = platform.python_version()
    print(json.dumps(report))
    return 0


def _service(args: argparse.Namespace, workers: list[int]) -> int:
    """``--tables``: the bot workers' throughput (``bench/_bot_tables.py``)."""
    import contextlib
    import os

    from bench._bot_tables import Options, run_series
    from services.logs import configure_logging
    from services.redis_runtime import redis_url_for_run

    os.environ.setdefault("MIGHTY_LOG_LEVEL", "warning")
    configure_logging()
    options = Options(game=args.game, level=args.level, tables=args.tables,
                      hands=1 if args.hands is None else args.hands, playouts=args.playouts, timeout_s=args.timeout_s)
    with contextlib.ExitStack() as stack:
        report = run_series(redis_url_for_run(stack), workers, args.rounds, options)
    report["python"] = platform.python_version()
    print(json.dumps(report))
    return 0


def _write(record: TextIO | None, entry: Mapping[str, Any]) -> None:
    if record is not None:
        record.write(json.dumps(entry) + "\n")
        record.flush()


class _Inline:
    """A stand-in for the process pool: runs each job in this process when its result is
    asked for, so that with ``--record`` each deal is written as soon as it is played."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, fn: Any, *args: Any) -> _Later:
        return _Later(fn, args)


class _Later:
    def __init__(self, fn: Any, args: tuple[Any, ...]) -> None:
        self._fn, self._args = fn, args

    def result(self) -> Any:
        return self._fn(*self._args)


if __name__ == "__main__":
    raise SystemExit(main())

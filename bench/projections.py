"""`mighty bench projections`: worker throughput and append-to-view lag.

1. Live: one worker process of each kind runs while ``--tables`` tables play random
   legal commands through the command handler for ``--seconds``. Each worker records,
   for every feed entry it stores, the lag from the append (the feed entry id is the
   server's clock at the append) to the write of the batch holding it (the server's
   clock, read in the same script): the append-to-stored-view lag, on one clock.
2. Throughput: for each kind alone, its projection is reset and one fresh worker
   process folds the whole feed; events/s is entries applied over the time from its
   first stored batch to caught up.

Prints one JSON object: events_per_s (the slowest kind's), lag_p50_ms and lag_p99_ms
(the views worker's), tables, and the figures per kind. Every key lives under a fresh
namespace, deleted at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from domain.table import CreateTable, Submission, TableState, evolve, initial_state
from projections import KINDS
from services.commands.tables import TableHandler, table_handler
from services.players import next_submission, seating
from services.projection.keys import ProjectionKeys
from services.projection.read import feed_positions, wait_until
from services.projection.rebuild import reset
from services.projection.store import ProjectionStore
from services.redis_runtime import redis_url_for_run
from services.settings import settings_from
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore, connect

PLAYERS = [f"p{i:03d}" for i in range(1, 101)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench projections")
    parser.add_argument("--tables", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=30.0, help="how long the tables play")
    parser.add_argument("--rate", type=float, default=1000.0,
                        help="commands per second over all tables (0: as fast as one process can)")
    parser.add_argument("--batch", type=int, default=1000, help="the workers' batch size")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("MIGHTY_LOG_LEVEL", "warning")
    from services.logs import configure_logging

    configure_logging()
    with contextlib.ExitStack() as stack:
        url = redis_url_for_run(stack)
        # the workers it starts read MIGHTY_PARTITIONS too (services/settings.py)
        space = KeySpace(settings_from().partitions, namespace=f"bench-{secrets.token_hex(4)}")
        client = connect(url)
        stack.callback(_delete_namespace, client, space)
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mighty-bench-")))
        result = run(client, url, space, logs, args)
    sys.stdout.write(json.dumps(result, indent=None if args.json else 2) + "\n")
    return 0


def run(client: Any, url: str, space: KeySpace, logs: Path, args: argparse.Namespace) -> dict[str, Any]:
    with _workers(url, space, logs, KINDS, args.batch) as workers:
        _wait_ready(client, space, KINDS)
        handler, states = _seat(client, space, args.tables)
        before = _settled_stats(client, space, workers)  # the seating is not "playing"
        live = _play(handler, states, args.seconds, args.rate)
        positions = feed_positions(client, space)
        for kind in KINDS:
            wait_until(client, space, kind, positions, timeout_s=300)
    stats = {kind: _stats(client, space, kind, worker_id) for kind, worker_id in workers.items()}
    for kind in KINDS:
        stats[kind]["lag_ms"] = _minus(stats[kind]["lag_ms"], before[kind]["lag_ms"])
    events = sum(client.xlen(space.feed(p)) for p in range(space.partitions))
    rates = {kind: _drain(client, url, space, logs, kind, args.batch, events) for kind in KINDS}
    views = stats["views"]["lag_ms"]
    return {
        "events_per_s": round(min(rates.values())),
        "lag_p50_ms": _percentile(views, 0.50),
        "lag_p99_ms": _percentile(views, 0.99),
        "tables": args.tables,
        "events": events,
        "commands_per_s": round(live["commands"] / live["seconds"]),
        "play_seconds": round(live["seconds"], 1),
        "rate_asked": args.rate,
        "by_kind": {
            kind: {
                "events_per_s": round(rates[kind]),
                "lag_p50_ms": _percentile(stats[kind]["lag_ms"], 0.50),
                "lag_p99_ms": _percentile(stats[kind]["lag_ms"], 0.99),
                "lag_max_ms": max((int(k) for k in stats[kind]["lag_ms"]), default=0),
                "cpu_s": round(stats[kind].get("cpu_s", 0.0), 2),
            }
            for kind in KINDS
        },
        "batch": args.batch,
        "cpus": os.cpu_count(),
    }


def _wait_ready(client: Any, space: KeySpace, kinds: tuple[str, ...], timeout_s: float = 60) -> None:
    """Until every partition of every kind has a worker (a lease): the lag measured is
    then the workers', not their start-up's."""
    deadline = time.monotonic() + timeout_s
    leases = [ProjectionKeys(space, kind).lease(p) for kind in kinds for p in range(space.partitions)]
    while client.exists(*leases) < len(leases):
        if time.monotonic() > deadline:
            raise TimeoutError("the workers did not take every partition")
        time.sleep(0.01)


States = dict[str, tuple[TableState, int]]


def _send(handler: TableHandler, states: States, table_id: str, submission: Submission) -> None:
    """Through the handler; the table's state here is folded from the events it returns."""
    state, version = states[table_id]
    result = handler.handle(table_id, submission, command_id=f"{table_id}-{version}")
    for event in result.events:
        state = evolve(state, event)
    states[table_id] = (state, result.version)


def _seat(client: Any, space: KeySpace, tables: int,
          idempotency_s: float | None = None) -> tuple[TableHandler, States]:
    """Create the tables, seat five players at each and start them (the store's command
    ids kept for ``idempotency_s``; None: the deployment default)."""
    handler = table_handler(RedisEventStore(client, keys=space, idempotency_s=idempotency_s))
    rng = random.Random(7)
    states: States = {f"b{i:05d}": (initial_state(f"b{i:05d}"), 0) for i in range(tables)}
    for table_id in states:
        seated = rng.sample(PLAYERS, 5)
        _send(handler, states, table_id, Submission(command=CreateTable(), player=seated[0]))
        for submission in seating(seated):
            _send(handler, states, table_id, submission)
    return handler, states


def _play(handler: TableHandler, states: States, seconds: float, rate: float) -> dict[str, float]:
    """Play every table round robin for ``seconds``: the dealer's deal or a random legal
    command of the seat to act, at most ``rate`` commands per second (0: flat out)."""
    rng = random.Random(11)
    commands = 0
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        for table_id, (state, _) in list(states.items()):
            move = next_submission(state, rng)
            if move is not None:
                _send(handler, states, table_id, move)
                commands += 1
            if rate and (ahead := commands / rate - (time.monotonic() - started)) > 0:
                time.sleep(ahead)
    return {"commands": commands, "seconds": time.monotonic() - started}


def _settled_stats(client: Any, space: KeySpace, workers: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each worker's stats once it has applied, and reported, every entry so far."""
    events = sum(client.xlen(space.feed(p)) for p in range(space.partitions))
    deadline = time.monotonic() + 120
    while True:
        stats = {kind: _stats(client, space, kind, worker_id) for kind, worker_id in workers.items()}
        if all(s.get("events", 0) >= events for s in stats.values()):
            return stats
        if time.monotonic() > deadline:
            raise TimeoutError("the workers did not catch up with the seating")
        time.sleep(0.05)


def _minus(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {ms: n - before.get(ms, 0) for ms, n in after.items() if n > before.get(ms, 0)}


def _drain(client: Any, url: str, space: KeySpace, logs: Path, kind: str, batch: int, events: int) -> float:
    """Reset ``kind`` and time one fresh worker folding the whole feed."""
    store = ProjectionStore(client, ProjectionKeys(space, kind))
    for partition in range(space.partitions):
        reset(store, partition)
    with _workers(url, space, logs, (kind,), batch):
        while (first := _applied(store)) == 0:
            time.sleep(0.002)
        started = time.monotonic()
        wait_until(client, space, kind, timeout_s=300)
        elapsed = time.monotonic() - started
    return (events - first) / elapsed


def _applied(store: ProjectionStore) -> int:
    return sum(store.checkpoint(p).count for p in range(store.keys.partitions))


@contextlib.contextmanager
def _workers(url: str, space: KeySpace, logs: Path, kinds: tuple[str, ...], batch: int,
             keep_feed: bool = True) -> Iterator[dict[str, str]]:
    """One worker process per kind. They keep the feed whole by default: the throughput
    phase resets a kind and times a worker folding the feed from its start."""
    env = {**os.environ, "MIGHTY_LOG_FORMAT": "json"}
    ids = {kind: f"bench-{kind}-{secrets.token_hex(3)}" for kind in kinds}
    processes = []
    for kind in kinds:
        argv = [sys.executable, "-m", "services.projection", kind, "--redis-url", url, "--namespace",
                space.namespace, "--id", ids[kind], "--batch", str(batch), *(["--keep-feed"] if keep_feed else [])]
        with open(logs / f"{ids[kind]}.log", "wb") as log:
            processes.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env))
    try:
        yield ids
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def _stats(client: Any, space: KeySpace, kind: str, worker_id: str) -> dict[str, Any]:
    data = client.get(ProjectionKeys(space, kind).stats(worker_id))
    return {"lag_ms": {}} if data is None else dict(msgspec.json.decode(data))


def _percentile(histogram: dict[str, int], q: float) -> int:
    buckets = sorted((int(ms), count) for ms, count in histogram.items())
    total = sum(count for _, count in buckets)
    seen = 0
    for ms, count in buckets:
        seen += count
        if seen >= q * total:
            return ms
    return 0


def _delete_namespace(client: Any, space: KeySpace) -> None:
    for key in client.scan_iter(match=f"{space.namespace}:*", count=1000):
        client.delete(key)


if __name__ == "__main__":
    raise SystemExit(main())

"""`mighty bench memory`: what Redis holds per live table and per finished hand.

Against a redis-server of its own (never ``REDIS_URL``: the figures must not mix with
anyone else's keys), with one worker process of each projection kind running:

1. baseline: the workers have taken every partition;
2. ``--tables`` mighty-5 tables are created, seated and started: **live table**;
3. each plays ``--hands`` hands (random legal commands through the command handler, the
   deals the service's): **within the idempotency window** (command ids still kept,
   views of open tables; the window must outlast the play, or ids sent early are already
   forgotten: ``window_outlasted_play`` says whether it did);
4. every table is closed; the workers catch up and trim the feeds, and the command ids
   outlive their window (the run's ``--idempotency-s``, short, stands in for the
   deployment's 24 h): **finished hand**, what a hand costs for good.

Memory is the sum of ``MEMORY USAGE <key> SAMPLES 0`` (exact: every element counted)
over every key of the run's namespace, taken at each step, grouped by what the key
holds; ``INFO memory`` ``used_memory`` deltas are printed beside it (they also count
the keyspace's own dictionaries and allocator rounding, and move with anything else
the server does). Prints one JSON object: ``bytes_per_finished_hand`` (step 4 minus
step 1, over the hands: a closed table's own keys are counted in), ``bytes_per_live_table``
(step 2 minus 1, over the tables), ``keys_per_table`` (live and closed), the within-window
figure and the breakdowns.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import secrets
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.projections import States, _seat, _send, _wait_ready, _workers
from domain.table import CloseTable, Submission
from projections import KINDS
from services.commands.tables import TableHandler
from services.players import next_submission
from services.projection.keys import ProjectionKeys
from services.projection.read import feed_positions, wait_until
from services.projection.store import ProjectionStore
from services.redis_runtime import start_private_redis
from services.store.keys import KeySpace
from services.store.redis_store import connect

# What a key holds, by its name under the namespace (first match wins).
_CATEGORIES = [
    ("table stream", re.compile(r":t:[^:]+:events$")),
    ("table meta", re.compile(r":t:[^:]+:meta$")),
    ("command ids", re.compile(r":t:[^:]+:cmd[a-z]*$")),
    ("feed", re.compile(r":feed$")),
    ("audit views", re.compile(r":view:[^:]+:audit:\d+$")),
    ("views", re.compile(r":view:")),
    ("ledger", re.compile(r":ledger:")),
    ("directory", re.compile(r":dir$")),
    ("timers", re.compile(r":\{timers\}")),  # turn deadlines, the idle and seen records
    ("dead letters", re.compile(r":dead:")),
    ("archive index", re.compile(r":archived$")),
    ("gateway command ids", re.compile(r":gateway:\{gw:[^}]+\}:commands?:")),
    ("players", re.compile(r":player:")),
    ("ratings", re.compile(r"ratings")),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench memory")
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--hands", type=int, default=5, help="hands each table plays")
    parser.add_argument("--idempotency-s", type=float, default=20.0,
                        help="the command-id window of this run (the deployment's default is 24 h): longer "
                             "than the hands take to play, so every id is still kept when step 3 is measured")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("MIGHTY_LOG_LEVEL", "warning")
    os.environ["MIGHTY_IDEMPOTENCY_S"] = str(args.idempotency_s)
    from services.logs import configure_logging

    configure_logging()
    with contextlib.ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mighty-bench-memory-")))
        server = start_private_redis(root / "redis", appendonly=False)
        stack.callback(server.stop)
        client = connect(server.url)
        space = KeySpace(namespace=f"benchmem-{secrets.token_hex(4)}")
        (root / "logs").mkdir()
        result = run(client, server.url, space, root / "logs", args)
    sys.stdout.write(json.dumps(result, indent=None if args.json else 2) + "\n")
    return 0


def run(client: Any, url: str, space: KeySpace, logs: Path, args: argparse.Namespace) -> dict[str, Any]:
    with _workers(url, space, logs, KINDS, 500, keep_feed=False):
        _wait_ready(client, space, KINDS)
        base = measure(client, space)
        handler, states = _seat(client, space, args.tables, args.idempotency_s)
        _settle(client, space)
        live = measure(client, space)
        started = time.monotonic()
        _, hands = play_hands(handler, states, args.hands)
        play_s = time.monotonic() - started
        _settle(client, space)
        played = measure(client, space)
        for table_id in states:
            _send(handler, states, table_id, Submission(command=CloseTable(reason="bench")))
        _settle(client, space)
        # the ids' keys expire at most 9/8 of a window after the last append (append.lua)
        time.sleep(args.idempotency_s * 1.125 + 1.0)
        _settle(client, space)
        closed = measure(client, space)
    tables = args.tables
    return {
        "bytes_per_finished_hand": round((closed["bytes"] - base["bytes"]) / hands),
        "bytes_per_live_table": round((live["bytes"] - base["bytes"]) / tables),
        "keys_per_table": {"live": round((live["keys"] - base["keys"]) / tables, 1),
                           "closed": round((closed["keys"] - base["keys"]) / tables, 1)},
        "bytes_per_hand_within_window": round((played["bytes"] - live["bytes"]) / hands),
        "used_memory_per_finished_hand": round((closed["used_memory"] - base["used_memory"]) / hands),
        "used_memory_per_hand_within_window": round((played["used_memory"] - live["used_memory"]) / hands),
        "per_finished_hand_by_category": _per(closed["by_category"], base["by_category"], hands),
        "per_hand_within_window_by_category": _per(played["by_category"], live["by_category"], hands),
        "per_live_table_by_category": _per(live["by_category"], base["by_category"], tables),
        "tables": tables,
        "hands": hands,
        "variant": "mighty-5",
        "idempotency_s": args.idempotency_s,
        "play_s": round(play_s, 2),
        "window_outlasted_play": play_s < args.idempotency_s,
        "partitions": space.partitions,
        "method": "sum of MEMORY USAGE key SAMPLES 0 over the run's keys",
    }


def play_hands(handler: TableHandler, states: States, hands: int) -> tuple[int, int]:
    """Every table plays until it has scored ``hands`` hands; answers the commands sent
    and the hands scored (``mighty bench aof`` plays the same hands)."""
    rng = random.Random(5)
    busy = set(states)
    commands = 0
    while busy:
        for table_id in sorted(busy):
            state, _ = states[table_id]
            if state.hands_scored >= hands:
                busy.discard(table_id)
                continue
            move = next_submission(state, rng)
            if move is not None:
                _send(handler, states, table_id, move)
                commands += 1
    return commands, sum(state.hands_scored for state, _ in states.values())


def _settle(client: Any, space: KeySpace) -> None:
    """Every kind has applied the whole feed, and the feed is trimmed as the workers trim
    it in their next round (the entries every kind has passed go), so a figure does not
    move with how much of that queue a worker had dropped when it was read."""
    positions = feed_positions(client, space)
    for kind in KINDS:
        wait_until(client, space, kind, positions, timeout_s=120)
    ProjectionStore(client, ProjectionKeys(space, KINDS[0])).trim(range(space.partitions), KINDS)
    time.sleep(0.2)


def category(name: str) -> str:
    for label, pattern in _CATEGORIES:
        if pattern.search(name):
            return label
    return "other"


def measure(client: Any, space: KeySpace) -> dict[str, Any]:
    """Bytes per category (MEMORY USAGE, exact), the key count, the bytes of the keys
    that expire (a TTL: they go by themselves), and INFO's used_memory."""
    names = [key for key in client.scan_iter(match=f"{space.namespace}:*", count=1000)]
    pipe = client.pipeline(transaction=False)
    for key in names:
        pipe.memory_usage(key, samples=0)
        pipe.pttl(key)
    found = pipe.execute()
    by_category: dict[str, int] = defaultdict(int)
    lasting: dict[str, int] = defaultdict(int)  # the keys with no TTL, by category
    keys = expiring = 0
    for key, used, ttl in zip(names, found[0::2], found[1::2], strict=True):
        if used is None:  # expired between SCAN and MEMORY USAGE
            continue
        keys += 1
        by_category[category(key.decode())] += int(used)
        if int(ttl) >= 0:
            expiring += int(used)
        else:
            lasting[category(key.decode())] += int(used)
    return {"bytes": sum(by_category.values()), "keys": keys, "by_category": dict(by_category),
            "expiring_bytes": expiring, "lasting_by_category": dict(lasting),
            "used_memory": int(client.info("memory")["used_memory"])}


def _per(after: dict[str, int], before: dict[str, int], n: int) -> dict[str, int]:
    labels = sorted(after.keys() | before.keys())
    return {label: round((after.get(label, 0) - before.get(label, 0)) / n) for label in labels
            if after.get(label, 0) != before.get(label, 0)}


if __name__ == "__main__":
    raise SystemExit(main())

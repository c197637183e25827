"""`mighty bench archive`: what archiving costs and what it frees (docs/archive.md).

``--tables`` tables of five players each play ``--hands`` hands through the command
handler and close; a worker of each projection kind (in this process) applies the feed.
Then:

1. memory before: per closed table, the bytes Redis holds for it (``MEMORY USAGE`` of its
   stream, head, command ids and index, views, ledger document), and ``used_memory``;
2. timed: one archive pass (``ArchiveWorker.run_once``, delay 0) moves every table into
   PostgreSQL: discover, copy in one transaction per table, read back, verify (hash chain
   and the full replay of ``services.audit.verify_events``), delete;
3. memory after: what is left per table (its index entry; its ledger document and the
   ratings' records of its hands, both gone with it since 2026-12-05/06) and ``used_memory``.

Prints one JSON object: ``archive_rows_per_s`` (event rows archived per second of the
pass), ``tables_per_s``, ``events_per_table``, ``bytes_per_live_table`` (Redis bytes of a
closed table before archiving), ``bytes_per_archived_table`` (its index entry, as Redis
accounts it, and the entry's JSON length), ``used_memory_freed_per_table``. Redis is
``REDIS_URL`` or a private redis-server; PostgreSQL is ``MIGHTY_ARCHIVE_URL`` or a
private server (``services/archive/runtime.py``). Keys and rows live under a fresh
namespace; the keys are deleted at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import sys
import time
from typing import Any

from domain.table import CloseTable, CreateTable, Submission, TableState, evolve, initial_state
from projections import KINDS
from services.archive.keys import ArchiveKeys
from services.archive.runtime import archive_url_for_run
from services.bootstrap import Wiring, wire
from services.players import next_submission, seating
from services.projection.rater import Rater
from services.projection.read import caught_up, feed_positions
from services.redis_runtime import redis_url_for_run
from services.settings import Settings
from services.store.redis_store import connect

PLAYERS = [f"p{i:03d}" for i in range(1, 41)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench archive")
    parser.add_argument("--tables", type=int, default=64)
    parser.add_argument("--hands", type=int, default=2, help="hands each table plays before it closes")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("MIGHTY_LOG_LEVEL", "warning")
    from services.logs import configure_logging

    configure_logging()
    with contextlib.ExitStack() as stack:
        url = redis_url_for_run(stack)
        archive_url = archive_url_for_run(stack)
        settings = Settings(redis_url=url, archive_url=archive_url, partitions=args.partitions,
                            namespace=f"bench-{secrets.token_hex(4)}", archive_after_s=0.0)
        client = connect(url)
        wiring = wire(client, settings)
        stack.callback(wiring.close)
        stack.callback(_delete_namespace, client, settings.namespace)
        result = run(wiring, args)
    sys.stdout.write(json.dumps(result, indent=None if args.json else 2) + "\n")
    return 0


def run(wiring: Wiring, args: argparse.Namespace) -> dict[str, Any]:
    assert wiring.archive is not None
    wiring.archive.migrate()
    ids = _play(wiring, args.tables, args.hands)
    _project(wiring)
    client = wiring.client
    before = {t: _table_bytes(wiring, t) for t in ids}
    rated_before = _rated_hands_bytes(wiring)
    used_before = int(client.info("memory")["used_memory"])
    events = sum(wiring.store.head(t).version for t in ids)

    worker = wiring.archive_worker(after_s=0.0)
    started = time.perf_counter()
    report = worker.run_once()
    elapsed = time.perf_counter() - started
    assert sorted(report.archived) == sorted(ids), report.as_dict()

    after = {t: _table_bytes(wiring, t) for t in ids}
    rated_after = _rated_hands_bytes(wiring)
    used_after = int(client.info("memory")["used_memory"])
    index_bytes = index_entry_bytes(client, wiring.store.archive_keys, wiring.space.partitions)
    entry_json = [len(client.hget(wiring.store.archive_keys.index_of(t), t) or b"") for t in ids]
    n = len(ids)
    return {
        "archive_rows_per_s": round(events / elapsed),
        "tables_per_s": round(n / elapsed, 1),
        "events_per_table": round(events / n, 1),
        "bytes_per_live_table": round(sum(b["total"] for b in before.values()) / n),
        "bytes_per_live_table_by_key": {k: round(sum(b[k] for b in before.values()) / n)
                                        for k in ("stream", "head", "command_ids", "views", "ledger")},
        "bytes_per_archived_table": {
            "index_entry": round(index_bytes / n),
            "index_entry_json": round(sum(entry_json) / n),
            "ledger_kept": round(sum(b["ledger"] for b in after.values()) / n),
            # the ratings' records of its hands, before archiving / kept after
            "rated_hands_before": round(rated_before / n),
            "rated_hands_kept": round(rated_after / n),
            "table_keys_left": sum(b["stream"] + b["head"] + b["command_ids"] + b["views"]
                                   for b in after.values()),
        },
        "used_memory_freed_per_table": round((used_before - used_after) / n),
        "context": {"tables": n, "hands": args.hands, "partitions": wiring.space.partitions,
                    "seconds": round(elapsed, 3), "redis": client.info("server")["redis_version"]},
    }


def _play(wiring: Wiring, tables: int, hands: int) -> list[str]:
    rng = random.Random(5)
    ids = [f"arch-{i:04d}" for i in range(tables)]
    states: dict[str, tuple[TableState, int]] = {}

    def send(table_id: str, submission: Submission) -> None:
        state, version = states[table_id]
        result = wiring.handler.handle(table_id, submission, command_id=f"{table_id}-{version}")
        for event in result.events:
            state = evolve(state, event)
        states[table_id] = (state, result.version)

    for table_id in ids:
        states[table_id] = (initial_state(table_id), 0)
        seated = rng.sample(PLAYERS, 5)
        send(table_id, Submission(command=CreateTable(name=table_id), player=seated[0]))
        for submission in seating(seated):
            send(table_id, submission)
    live = list(ids)
    while live:
        for table_id in list(live):
            state = states[table_id][0]
            if state.hands_scored >= hands:
                send(table_id, Submission(command=CloseTable(reason="bench over")))
                live.remove(table_id)
            elif (move := next_submission(state, rng)) is not None:
                send(table_id, move)
    return ids


def _project(wiring: Wiring) -> None:
    at = feed_positions(wiring.client, wiring.space)
    for kind in KINDS:
        worker = wiring.worker(kind, block_ms=1, linger_ms=0, lease_ms=5000, publish=False)
        for _ in range(10_000):
            if caught_up(wiring.client, wiring.space, kind, at):
                break
            worker.step()
        worker.shutdown()
    rater = Rater(wiring.client, wiring.space)  # the archive waits for the rater (docs/ratings.md)
    wiring.client.set(rater.keys.lease, rater.token, px=5000)  # the stopped worker's rater held it
    while rater.step():
        pass
    rater.release()


def _rated_hands_bytes(wiring: Wiring) -> int:
    """``MEMORY USAGE`` of every partition's records of rated hands (``ratings:hands:<hour>``)."""
    client = wiring.client
    found = [key for p in range(wiring.space.partitions) for key in client.scan_iter(
        match=f"{wiring.space.namespace}:{wiring.space.tag(p)}:ratings:hands:*", count=1000)]
    return sum(int(client.memory_usage(key, samples=0) or 0) for key in found)


def _table_bytes(wiring: Wiring, table_id: str) -> dict[str, int]:
    """``MEMORY USAGE`` of each of the table's keys, by what they hold."""
    client = wiring.client
    keys = wiring.space.table(table_id)
    prefix = f"{wiring.space.namespace}:{wiring.space.tag(wiring.space.partition_of(table_id))}:"
    views = list(client.scan_iter(match=f"{prefix}view:{table_id}:*", count=1000))

    def usage(*names: Any) -> int:
        return sum(int(client.memory_usage(name) or 0) for name in names)

    found = {"stream": usage(keys.events), "head": usage(keys.meta),
             "command_ids": usage(keys.commands, keys.previous_commands), "views": usage(*views),
             "ledger": usage(f"{prefix}ledger:t:{table_id}")}
    found["total"] = sum(found.values())
    return found


def index_entry_bytes(client: Any, keys: ArchiveKeys, partitions: int) -> int:
    """What Redis keeps of every archived table: ``MEMORY USAGE`` of each partition's
    index hash (``services/archive/keys.py``), summed."""
    pipe = client.pipeline(transaction=False)
    for partition in range(partitions):
        pipe.memory_usage(keys.index(partition), samples=0)
    return sum(int(used or 0) for used in pipe.execute())


def _delete_namespace(client: Any, namespace: str) -> None:
    for key in client.scan_iter(match=f"{namespace}:*", count=1000):
        client.delete(key)


if __name__ == "__main__":
    raise SystemExit(main())

"""Helpers for the worker tests: tables played through the command handler, worker
processes started and killed, and what the streams say happened."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from domain.codec import decode_event
from domain.mighty.events import HandScored
from domain.table import CreateTable, Submission, TableState, evolve, initial_state
from projections import KINDS
from services.commands.tables import TableHandler, table_handler
from services.players import next_submission, seating
from services.projection.keys import ProjectionKeys
from services.projection.rebuild import check
from services.projection.store import ProjectionStore
from services.projection.worker import Worker
from services.settings import Settings
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore

PLAYERS = [f"p{i:02d}" for i in range(1, 11)]


class Tables:
    """Tables played through the handler; each table's state folded from its results."""

    def __init__(self, client: Any, space: KeySpace, seed: int = 0) -> None:
        self.handler: TableHandler = table_handler(RedisEventStore(client, keys=space))
        self.rng = random.Random(seed)
        self.states: dict[str, tuple[TableState, int]] = {}

    def send(self, table_id: str, submission: Submission) -> None:
        state, version = self.states[table_id]
        result = self.handler.handle(table_id, submission, command_id=f"{table_id}-{version}")
        for event in result.events:
            state = evolve(state, event)
        self.states[table_id] = (state, result.version)

    def open(self, table_ids: list[str], variant: str | None = None) -> None:
        for table_id in table_ids:
            self.states[table_id] = (initial_state(table_id), 0)
            seated = self.rng.sample(PLAYERS, 3 if variant == "mitigati" else 5)
            create = CreateTable(name=table_id) if variant is None else CreateTable(variant=variant, name=table_id)
            self.send(table_id, Submission(command=create, player=seated[0]))
            for submission in seating(seated):
                self.send(table_id, submission)

    def play(self, hands: int, steps: int | None = None) -> None:
        """Round robin until every table has scored ``hands`` hands (or ``steps`` rounds)."""
        rounds = 0
        while any(s.hands_scored < hands for s, _ in self.states.values()):
            for table_id, (state, _) in list(self.states.items()):
                if state.hands_scored < hands and (move := next_submission(state, self.rng)) is not None:
                    self.send(table_id, move)
            rounds += 1
            if steps is not None and rounds >= steps:
                return


def start_worker(url: str, kind: str, *extra: str, logs: Path | None = None) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "services.projection", kind, "--redis-url", url, "--lease-ms", "600",
            "--block-ms", "20", *extra]
    env = {**os.environ, "MIGHTY_LOG_FORMAT": "json", "MIGHTY_LOG_LEVEL": "warning"}
    out = open(logs, "ab") if logs else subprocess.DEVNULL  # noqa: SIM115 - handed to the child
    try:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env)
    finally:
        if logs:
            out.close()  # type: ignore[union-attr]


@contextmanager
def workers(url: str, kinds: tuple[str, ...] = KINDS, *extra: str) -> Iterator[list[subprocess.Popen[bytes]]]:
    processes = [start_worker(url, kind, *extra) for kind in kinds]
    try:
        yield processes
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            process.wait(timeout=15)


def wait_ready(client: Any, space: KeySpace, kinds: tuple[str, ...], timeout_s: float = 30.0) -> None:
    """Until a worker of each kind holds every partition's lease."""
    leases = [ProjectionKeys(space, k).lease(p) for k in kinds for p in range(space.partitions)]
    wait_for(lambda: client.exists(*leases) == len(leases), timeout_s, "the workers to take the partitions")


def in_process_worker(client: Any, kind: str, space: KeySpace, **options: Any) -> Worker:
    """A worker in this process, wired as a worker process wires it (``services.bootstrap``)."""
    from services.bootstrap import wire

    settings = Settings(namespace=space.namespace, partitions=space.partitions)
    return wire(client, settings).worker(kind, **options)


def store_of(client: Any, space: KeySpace, kind: str) -> ProjectionStore:
    return ProjectionStore(client, ProjectionKeys(space, kind))


def applied(client: Any, space: KeySpace, kind: str) -> int:
    store = store_of(client, space, kind)
    return sum(store.checkpoint(p).count for p in range(space.partitions))


def feed_length(client: Any, space: KeySpace) -> int:
    """Entries ever appended to the feeds (``entries-added``: the workers trim the feeds)."""
    pipe = client.pipeline(transaction=False)
    for p in range(space.partitions):
        pipe.xinfo_stream(space.feed(p))
    replies = pipe.execute(raise_on_error=False)
    return sum(0 if isinstance(r, Exception) else int(r["entries-added"]) for r in replies)


def catch_up(worker: Worker, client: Any, space: KeySpace) -> None:
    """Step an in-process worker until its kind has applied every entry the feeds were given."""
    while applied(client, space, worker.kind.name) < feed_length(client, space):
        worker.step()


def wait_for(predicate: Any, timeout_s: float = 30.0, what: str = "a condition") -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.005)


def assert_identical_to_a_rebuild(client: Any, space: KeySpace, kinds: tuple[str, ...] = KINDS) -> None:
    for kind in kinds:
        store = store_of(client, space, kind)
        for partition in range(space.partitions):
            differences = check(store, partition)
            assert not differences, f"{kind} p{partition}: {differences[:3]}"


def scored_hands(client: Any, space: KeySpace, table_ids: list[str]) -> dict[str, list[HandScored]]:
    """Every HandScored event of each table, read from its own stream."""
    store = RedisEventStore(client, keys=space)
    return {
        t: [e for e in (decode_event(s.data) for s in store.read(t)) if isinstance(e, HandScored)]
        for t in table_ids
    }


def read_not_applied(client: Any, space: KeySpace, kind: str) -> int:
    """Entries the kind's group says were delivered past the stored checkpoint: none
    ever (the workers read with XREAD, and set the group to their checkpoint only)."""
    keys = ProjectionKeys(space, kind)
    store = store_of(client, space, kind)
    total = 0
    for partition in range(space.partitions):
        try:
            groups = client.xinfo_groups(keys.feed(partition))
        except Exception:  # no feed yet
            continue
        delivered = next((g["last-delivered-id"] for g in groups if g["name"].decode() == keys.group), None)
        if delivered is None:
            continue
        checkpoint = store.checkpoint(partition).id
        start = "-" if checkpoint == "0-0" else f"({checkpoint}"
        total += len(client.xrange(keys.feed(partition), start, delivered.decode()))
    return total

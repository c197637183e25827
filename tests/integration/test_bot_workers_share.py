"""Two bot workers as processes split the partitions through their leases: every table of
bots finishes, each table's moves come from one worker at a time, and a killed worker's
tables are played on by the other within the lease bound (docs/bots.md, "Several bot
workers")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from domain.codec import decode_event
from domain.table import CreateTable, JoinSeat, Submission, TableClosed
from services.app.steps import service_steps
from services.bootstrap import Wiring, wire
from services.bots.worker import BOTS_KIND
from services.projection.keys import ProjectionKeys
from services.projection.leases import Leases
from services.redis_runtime import PrivateRedis
from services.settings import Settings
from services.store import connect
from services.store.keys import partition_of

LEASE_MS = 3000
WORKERS = ("bots-a", "bots-b")


@pytest.fixture
def wiring(redis_server: PrivateRedis) -> Iterator[Wiring]:
    wired = wire(connect(redis_server.url), Settings(redis_url=redis_server.url, namespace="share"))
    try:
        yield wired
    finally:
        wired.close()


class Service:
    """The views worker and two bot workers (ids ``bots-a``, ``bots-b``, their moves
    logged at debug level to ``logs/<id>.log``)."""

    def __init__(self, wiring: Wiring, logs: Path) -> None:
        self.wiring, self.logs = wiring, logs
        env = {**wiring.settings.as_env(), "MIGHTY_LOG_FORMAT": "json"}
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        for name, argv in [("views", ["views"]),
                           *((worker, ["bots", "--id", worker, "--lease-ms", str(LEASE_MS)]) for worker in WORKERS)]:
            level = "debug" if name in WORKERS else "info"
            with open(logs / f"{name}.log", "wb") as log:
                self.processes[name] = subprocess.Popen(
                    [sys.executable, "-m", "services.cli", "worker", *argv], stdout=log, stderr=log,
                    env={**os.environ, **env, "MIGHTY_LOG_LEVEL": level})
        self.leases = Leases(wiring.client, ProjectionKeys(wiring.space, BOTS_KIND))

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            process.wait(timeout=20)

    def wait_for(self, condition: Callable[[], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if condition():
                return
            for name, process in self.processes.items():
                assert process.poll() is None or process.returncode == -signal.SIGKILL, f"{name} exited"
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}")

    def shared(self) -> bool:
        """Each of the two workers holds its half of the partitions."""
        holders = self.leases.holders()
        half = self.wiring.space.partitions // 2
        return all(holders.count(worker) == half for worker in WORKERS)

    def moves(self) -> dict[str, list[tuple[int, str]]]:
        """Per table, the (version, worker) of each move the workers logged, by version."""
        found: dict[str, list[tuple[int, str]]] = {}
        for worker in WORKERS:
            for line in (self.logs / f"{worker}.log").read_text(errors="replace").splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by the kill
                if entry.get("event") == "bot_move":
                    assert entry["worker"] == worker
                    found.setdefault(entry["table"], []).append((entry["version"], worker))
        return {table: sorted(moves) for table, moves in found.items()}


@pytest.fixture
def service(wiring: Wiring, tmp_path: Path) -> Iterator[Service]:
    running = Service(wiring, tmp_path)
    try:
        running.wait_for(running.shared, timeout_s=60, what="the workers to share the partitions")
        yield running
    finally:
        running.stop()


def bot_tables(service: Service, per_worker: int, hands: int) -> dict[str, str]:
    """Tables of five beginner bots, ``per_worker`` in the partitions of each worker,
    started and dealt as the gateway does; answers each table's owning worker."""
    holders = service.leases.holders()
    wanted = {worker: per_worker for worker in WORKERS}
    tables: dict[str, str] = {}
    n = 0
    while any(wanted.values()):
        table_id = f"share{n}"
        n += 1
        owner = holders[partition_of(table_id, service.wiring.space.partitions)]
        if owner is None or not wanted.get(owner):
            continue
        wanted[owner] -= 1
        tables[table_id] = owner
    handler = service.wiring.handler
    bots = {str(seat): "beginner" for seat in range(5)}
    for table_id in tables:
        handler.handle(table_id, Submission(CreateTable(hands=hands, bots=bots), "owner"), command_id="create")
        for seat in range(5):
            handler.handle(table_id, Submission(JoinSeat(seat=seat), f"b-{table_id}-{seat}"), command_id=f"j{seat}")
        state, _ = handler.state_of(table_id)
        service_steps(handler, table_id, state)
    return tables


def all_closed(service: Service, tables: dict[str, str]) -> Callable[[], bool]:
    def closed() -> bool:
        return all(service.wiring.handler.state_of(t)[0].status == "closed" for t in tables)
    return closed


def assert_each_move_appended_once(service: Service, table_id: str, hands: int) -> None:
    stored = service.wiring.store.read(table_id)
    events = [decode_event(e.data) for e in stored]
    assert isinstance(events[-1], TableClosed) and events[-1].reason == "match_over"
    assert sum(type(e).__name__ == "HandScored" for e in events) == hands
    # a command's events are one run of versions: an id met again after another is a second append
    runs = [e.command_id for e in stored]
    appends = [cid for i, cid in enumerate(runs) if i == 0 or runs[i - 1] != cid]
    moves = [cid for cid in appends if cid.startswith("turn-")]
    assert moves and len(moves) == len(set(moves))


def test_two_bot_workers_split_the_tables_and_each_table_is_played_by_the_worker_owning_it(
    service: Service,
) -> None:
    tables = bot_tables(service, per_worker=3, hands=1)

    service.wait_for(all_closed(service, tables), timeout_s=240, what="every table to finish")

    moves = service.moves()
    for table_id, owner in tables.items():
        assert_each_move_appended_once(service, table_id, hands=1)
        assert {worker for _, worker in moves[table_id]} == {owner}, table_id
    assert service.shared()  # nobody lost a lease on the way


def test_a_killed_bot_workers_tables_are_taken_within_the_lease_bound_and_every_table_finishes(
    service: Service,
) -> None:
    tables = bot_tables(service, per_worker=3, hands=2)
    killed, survivor = WORKERS

    def played_a_while() -> bool:
        moves = service.moves()
        return all(len(moves.get(t, [])) >= 10 for t, owner in tables.items() if owner == killed)

    service.wait_for(played_a_while, timeout_s=120, what="the first moves")
    service.processes[killed].send_signal(signal.SIGKILL)

    def survivor_holds_all() -> bool:
        return service.leases.holders().count(survivor) == service.wiring.space.partitions

    # a dead worker's heartbeat and leases expire after the lease; the survivor looks every lease/3
    bound_s = LEASE_MS / 1000 * (1 + 1 / 3) + 3.0  # slack for a loaded machine
    service.wait_for(survivor_holds_all, timeout_s=bound_s, what="the survivor to take every partition")
    service.wait_for(all_closed(service, tables), timeout_s=300, what="every table to finish")

    moves = service.moves()
    for table_id, owner in tables.items():
        assert_each_move_appended_once(service, table_id, hands=2)
        workers = [worker for _, worker in moves[table_id]]
        if owner == survivor:
            assert set(workers) == {survivor}, table_id
        else:  # one worker at a time: the killed one's moves, then the survivor's
            handed = workers.index(survivor)
            assert set(workers[:handed]) == {killed} and set(workers[handed:]) == {survivor}, table_id

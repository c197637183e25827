"""`mighty bench bots --tables N`: bot-table throughput of the service's bot workers.

Each run starts, under a fresh namespace of one Redis, a views worker and ``W`` bot
worker processes (``mighty worker bots``), waits until the bot workers share the
partitions (each holds its lease share), then seats ``--tables`` tables of bots
(``--level``, every seat) spread evenly over the partitions, so each worker gets the
same number; it deals them all and waits until every table has played its ``--hands``
hands and closed. Nothing else is on the path: no gateway, no person; the views worker
only folds what the bots append, so the bot workers, thinking (the expert's playouts),
are the bottleneck, and the report shows it (their CPU over the run's time, and the
views worker's and Redis's).

Throughput is hands (and moves) over the seconds from the first deal to the last table's
close, both on the Redis server's clock (a feed entry's id is the time of its append).
``--workers 1,2 --rounds 3`` runs 1, 2, 1, 2, 1, 2 workers (the machine's speed drifts:
alternate, do not run all of one then all of the other) and reports each run, the median
per worker count, and the ratio of the last count's median to the first's.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import redis

from bench.load import run_queue_s
from domain.registry import game_named
from domain.table import CreateTable, JoinSeat, Submission
from services.app.steps import service_steps
from services.bootstrap import Wiring, wire
from services.bots.worker import BOTS_KIND
from services.projection.keys import ProjectionKeys
from services.projection.leases import Leases, fair_share
from services.projection.store import last_given
from services.sessions import own_session
from services.settings import Settings, settings_from
from services.store import connect
from services.store.cluster import is_cluster
from services.store.keys import partition_of


@dataclass(frozen=True)
class Options:
    game: str
    level: str
    tables: int
    hands: int
    playouts: int | None
    timeout_s: float


def table_ids(tables: int, holders: Sequence[str | None]) -> list[str]:
    """``tables`` ids spread evenly over the lease holders (``holders[p]`` holds
    partition ``p``), and over each one's partitions: the i-th in a partition of the
    ``i % workers``-th holder, so each worker plays as many tables as any other."""
    workers = sorted({h for h in holders if h is not None})
    owned = {w: [p for p, h in enumerate(holders) if h == w] for w in workers}
    ids: list[str] = []
    n = 0
    for i in range(tables):
        worker = workers[i % len(workers)]
        partition = owned[worker][(i // len(workers)) % len(owned[worker])]
        while partition_of(f"bt{n}", len(holders)) != partition:
            n += 1
        ids.append(f"bt{n}")
        n += 1
    return ids


def run_series(url: str, workers: Sequence[int], rounds: int, options: Options) -> dict[str, Any]:
    """Every worker count in turn, ``rounds`` times; the runs, medians and ratio."""
    runs = []
    for round_no in range(rounds):
        for count in workers:
            result = run_once(url, count, options)
            result["round"] = round_no + 1
            runs.append(result)
            sys.stderr.write(f"workers={count} round={round_no + 1}: {result['hands_per_s']} hands/s, "
                             f"{result['moves_per_s']} moves/s, load {result['loadavg_1m']}\n")
    medians = {str(count): statistics.median(r["hands_per_s"] for r in runs if r["workers"] == count)
               for count in workers}
    report: dict[str, Any] = {
        "mode": "service", "game": options.game, "level": options.level, "tables": options.tables,
        "hands_per_table": options.hands, "playouts": options.playouts, "workers": list(workers),
        "rounds": rounds, "median_hands_per_s": medians, "cpus": os.cpu_count(), "runs": runs,
    }
    if len(workers) >= 2:
        first, last = str(workers[0]), str(workers[-1])
        report["ratio"] = round(medians[last] / medians[first], 3)
        pairs = [(a, b) for a, b in zip(runs, runs[1:], strict=False)
                 if a["workers"] == workers[0] and b["workers"] == workers[-1] and a["round"] == b["round"]]
        report["ratio_per_round"] = [round(b["hands_per_s"] / a["hands_per_s"], 3) for a, b in pairs]
    return report


def run_once(url: str, count: int, options: Options) -> dict[str, Any]:
    """One run with ``count`` bot workers under a fresh namespace, deleted afterwards."""
    namespace = f"bench-bots-{secrets.token_hex(4)}"
    settings = Settings(redis_url=url, namespace=namespace, partitions=settings_from().partitions)
    wiring = wire(connect(url), settings)
    try:
        with tempfile.TemporaryDirectory(prefix="mighty-bench-bots-") as logs, \
                _processes(wiring, count, options, Path(logs)) as processes:
            ids = [name for name in processes if name.startswith(BOTS_KIND)]
            _wait_shared(wiring, ids, processes)
            return _measure(wiring, count, options, processes)
    finally:
        with contextlib.suppress(Exception):
            _delete_namespace(wiring.client, namespace)
        wiring.close()


@contextlib.contextmanager
def _processes(wiring: Wiring, count: int, options: Options, logs: Path) -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    env = {**os.environ, **wiring.settings.as_env(), "MIGHTY_LOG_LEVEL": "warning", "MIGHTY_LOG_FORMAT": "json"}
    commands = {"views": ["views"]}
    playouts = [] if options.playouts is None else ["--playouts", str(options.playouts)]
    for n in range(count):
        commands[f"{BOTS_KIND}-{n}"] = [BOTS_KIND, "--id", f"{BOTS_KIND}-{n}", *playouts]
    processes: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name, argv in commands.items():
            with open(logs / f"{name}.log", "wb") as log:
                # each in a session of its own, as mighty serve starts them: under the
                # kernel's autogroup scheduling the processes of one session share one
                # session's CPU share, so a second worker in the bench's session would
                # split that share on a busy machine instead of adding one
                processes[name] = subprocess.Popen([sys.executable, "-m", "services.cli", "worker", *argv],
                                                   stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                                   **own_session())
        yield processes
    finally:
        for process in processes.values():
            process.terminate()
        for process in processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


def _wait_shared(wiring: Wiring, ids: list[str], processes: dict[str, subprocess.Popen[bytes]],
                 timeout_s: float = 90) -> None:
    """Until the views worker holds every partition and each bot worker its share."""
    space = wiring.space
    views = Leases(wiring.client, ProjectionKeys(space, "views"))
    bots = Leases(wiring.client, ProjectionKeys(space, BOTS_KIND))
    share = fair_share(space.partitions, len(ids))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in processes.values()):
            raise RuntimeError("a worker exited while starting")
        holders = bots.holders()
        if None not in views.holders() and None not in holders and set(holders) == set(ids) \
                and all(holders.count(i) <= share for i in ids):
            return
        time.sleep(0.05)
    raise TimeoutError("the bot workers did not share the partitions")


def _measure(wiring: Wiring, count: int, options: Options, processes: dict[str, subprocess.Popen[bytes]]) -> dict[str, Any]:
    handler, client, space = wiring.handler, wiring.client, wiring.space
    game = game_named(options.game)
    players = game.players(game.make_rules(options.game, {}))
    bots = {str(seat): options.level for seat in range(players)}
    ids = table_ids(options.tables, Leases(client, ProjectionKeys(space, BOTS_KIND)).holders())
    for table_id in ids:
        handler.handle(table_id, Submission(CreateTable(variant=options.game, hands=options.hands, bots=bots), "bench"),
                       command_id="create")
        for seat in range(players):
            handler.handle(table_id, Submission(JoinSeat(seat=seat), f"bot-{table_id}-{seat}"), command_id=f"j{seat}")
    cpu = _Cpu(processes, client)
    load_before = os.getloadavg()[0]
    cpu.start()
    start_s, start_us = client.time()
    start_ms = start_s * 1000 + start_us // 1000
    for table_id in ids:  # the first deal: from here the bot workers play
        service_steps(handler, table_id, handler.state_of(table_id)[0])
    deadline = time.monotonic() + options.timeout_s
    open_tables = set(ids)
    while open_tables:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(open_tables)} tables did not finish in {options.timeout_s} s")
        if any(p.poll() is not None for p in processes.values()):
            raise RuntimeError("a worker exited during the run")
        time.sleep(0.5)
        open_tables = {t for t in open_tables if handler.state_of(t)[0].status != "closed"}
    spent = cpu.stop()
    load_after = os.getloadavg()[0]
    end_ms = max(_last_ms(client, space.feed(p)) for p in range(space.partitions))
    seconds = (end_ms - start_ms) / 1000
    moves = sum(_moves(wiring, table_id) for table_id in ids)
    hands = options.tables * options.hands
    stats = [_stats(client, space, name) for name in processes if name.startswith(BOTS_KIND)]
    bot_names = [name for name in processes if name.startswith(BOTS_KIND)]
    bots_cpu = sum(spent["cpu_s"][name] for name in bot_names)
    return {
        "workers": count,
        "seconds": round(seconds, 2),
        "hands": hands,
        "hands_per_s": round(hands / seconds, 4),
        "moves": moves,
        "moves_per_s": round(moves / seconds, 2),
        # bot workers' CPU over their wall time: near 1 when they are the bottleneck and
        # get a core each; waited_s is their time runnable but without a CPU (other work)
        "bots_busy": round(bots_cpu / (seconds * count), 3),
        "bots_waited_s": round(sum(spent["waited_s"][name] for name in bot_names), 2),
        "thinking_s": round(sum(s.get("thinking_s", 0.0) for s in stats), 2),
        # moves per CPU second of the bot workers: what a core buys, whatever share of one they got
        "moves_per_bot_cpu_s": round(moves / bots_cpu, 2) if bots_cpu else None,
        "cpu_s": {name: round(value, 2) for name, value in spent["cpu_s"].items()},
        "loadavg_1m": [round(load_before, 2), round(load_after, 2)],
    }


class _Cpu:
    """CPU and run-queue seconds of the run's processes, of Redis and of this one."""

    def __init__(self, processes: dict[str, subprocess.Popen[bytes]], client: Any) -> None:
        self.processes, self.client = processes, client
        self._at: dict[str, dict[str, float]] = {}

    def _now(self) -> dict[str, dict[str, float]]:
        cpu: dict[str, float] = {}
        waited: dict[str, float] = {}
        pids: dict[str, int | str] = {name: p.pid for name, p in self.processes.items()}
        if not is_cluster(self.client):  # one redis-server on this machine
            pids["redis"] = int(self.client.info("server")["process_id"])
        pids["bench"] = "self"
        for name, pid in pids.items():
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                cpu[name] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
                waited[name] = run_queue_s(pid)
        return {"cpu_s": cpu, "waited_s": waited}

    def start(self) -> None:
        self._at = self._now()

    def stop(self) -> dict[str, dict[str, float]]:
        now = self._now()
        return {kind: {name: now[kind][name] - self._at[kind].get(name, 0.0) for name in now[kind]} for kind in now}


def _last_ms(client: Any, feed: str) -> int:
    """When the feed was last given an entry (its workers may have trimmed it empty)."""
    try:
        info = client.xinfo_stream(feed)
    except redis.ResponseError:  # no feed
        return 0
    return int(last_given(info).partition("-")[0])


def _moves(wiring: Wiring, table_id: str) -> int:
    """The bot moves appended at a table (a command's events share its id)."""
    return len({e.command_id for e in wiring.store.read(table_id) if e.command_id.startswith("turn-")})


def _stats(client: Any, space: Any, worker_id: str) -> dict[str, Any]:
    data = client.get(ProjectionKeys(space, BOTS_KIND).stats(worker_id))
    return {} if data is None else dict(msgspec.json.decode(data))


def _delete_namespace(client: Any, namespace: str) -> None:
    for key in client.scan_iter(match=f"{namespace}:*", count=1000):
        client.delete(key)


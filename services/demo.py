"""``mighty demo``: tables of random players, end to end, and the ledger they leave.

Tables are created (``--variant``: ``mighty-5`` by default, or any playable Mighty variant,
or ``mitigati``) and as many players from a pool (``p01`` ...) as the game has seats
seated at each; the table
starts, the service deals (``services/commands/dealer.py``) and the seat to act plays a random
legal command (``services/players.py``), all through the command handler and the event
store. The projection workers run as separate processes (``python -m services.projection``).
When every table has played its hands the demo waits until the projections have applied
every feed entry (``wait_until``), then prints the players' ledger as the ledger
projection stored it.

Redis: ``REDIS_URL`` when set (under a fresh key namespace unless ``MIGHTY_NAMESPACE`` or
``--namespace`` names one, so the ledger is this run's), else a private redis-server from
the PATH, else an embedded fake Redis in this process; the last two end with the demo.
``services/cli/demo.py`` is the command: its options, and what it prints.
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import msgspec

from domain.table import TableState
from projections import KINDS
from services.bootstrap import bootstrap, run_redis
from services.redis_runtime import RedisKind
from services.settings import Settings

_PLAYER_POOL = 10


class Progress:
    """One line on stderr, redrawn at most every 0.1 s: a bar, hands played, commands."""

    def __init__(self, total: int, out: TextIO = sys.stderr, width: int = 30) -> None:
        self.total, self.out, self.width = total, out, width
        self._next = 0.0

    def update(self, done: int, commands: int, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now < self._next:
            return
        self._next = now + (0.1 if self.out.isatty() else 2.0)
        filled = self.width * done // max(self.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        self.out.write(f"\r[{bar}] {done}/{self.total} hands, {commands} commands")
        self.out.flush()

    def finish(self, done: int, commands: int) -> None:
        self.update(done, commands, force=True)
        self.out.write("\n")


class DemoResult(msgspec.Struct, frozen=True):
    """What a demo run did and where its tables are."""

    hands: int
    ledger: list[dict[str, Any]]
    namespace: str
    tables: list[str]
    redis: RedisKind  # given (REDIS_URL: the tables stay), private or embedded (gone with the run)
    redis_url: str
    partitions: int


def run_demo(settings: Settings, tables: int, hands: int, *, seed: int | None = None,
             progress: bool = True, variant: str = "mighty-5") -> DemoResult:
    """Play the tables in the Redis ``settings`` name, or one of the demo's own
    (``bootstrap.run_redis``). In a Redis it was given, the demo plays under a fresh
    namespace of its own unless one was chosen, so the ledger is this run's alone."""
    with contextlib.ExitStack() as stack:
        settings, redis_ = run_redis(settings, stack)
        if redis_.kind == "given" and not settings.namespace_chosen:
            settings = msgspec.structs.replace(settings, namespace=f"demo-{secrets.token_hex(4)}")
        wiring = bootstrap(settings)
        stack.callback(wiring.close)
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mighty-demo-")))
        workers = stack.enter_context(_workers(settings, logs))
        ids = _play(wiring.handler, tables, hands, random.Random(seed),
                    Progress(tables * hands) if progress else None, variant)
        positions = wiring.readers.feed_positions()
        for kind in KINDS:
            wiring.readers.wait_until(kind, positions, timeout_s=120, check=lambda: _alive(workers))
        ledger = [{"player": p.player, "total": p.total} for p in wiring.readers.player_ledgers()]
        played = sum(state.hands_scored for state in ids.values())
    return DemoResult(played, ledger, settings.namespace, sorted(ids), redis_.kind, redis_.url,
                      settings.partitions)


@contextlib.contextmanager
def _workers(settings: Settings, logs: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """One worker process of each kind on the demo's settings (passed on through the
    environment), stopped (SIGTERM) on the way out."""
    env = {**os.environ, **settings.as_env(), "MIGHTY_LOG_FORMAT": "json"}
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for kind in KINDS:
            log = open(logs / f"{kind}.log", "wb")  # noqa: SIM115 - closed with the process
            argv = [sys.executable, "-m", "services.projection", kind, "--lease-ms", "2000"]
            processes.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env))
            log.close()
        yield processes
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        for process, kind in zip(processes, KINDS, strict=True):
            if process.returncode not in (0, -15):
                sys.stderr.write(f"mighty demo: the {kind} worker exited with {process.returncode}:\n")
                sys.stderr.write((logs / f"{kind}.log").read_text(errors="replace")[-2000:])


def _alive(workers: list[subprocess.Popen[bytes]]) -> None:
    for process, kind in zip(workers, KINDS, strict=True):
        if process.poll() is not None:
            raise RuntimeError(f"the {kind} worker exited with {process.returncode}")


def _play(handler: Any, tables: int, hands: int, rng: random.Random, progress: Progress | None,
          variant: str = "mighty-5") -> dict[str, TableState]:
    """Play every table until it has scored ``hands`` hands, then close it; the tables'
    final states by table id."""
    from domain.registry import game_named
    from domain.table import CloseTable, CreateTable, Submission, evolve, initial_state
    from services.players import next_submission, seating

    game = game_named(variant)
    seats = game.players(game.make_rules(variant, {}))

    players = [f"p{i:02d}" for i in range(1, max(_PLAYER_POOL, 5) + 1)]
    run = secrets.token_hex(3)
    ids = [f"demo-{run}-{i:03d}" for i in range(tables)]
    states = {t: (initial_state(t), 0) for t in ids}
    commands = 0

    def send(table_id: str, submission: Submission) -> None:
        """Through the handler; the table's state here is folded from what it returns."""
        nonlocal commands
        state, version = states[table_id]
        result = handler.handle(table_id, submission, command_id=f"{table_id}-{version}")
        for event in result.events:
            state = evolve(state, event)
        states[table_id] = (state, result.version)
        commands += 1

    def scored() -> int:
        return sum(state.hands_scored for state, _ in states.values())

    for table_id in ids:
        seated = rng.sample(players, seats)
        create = CreateTable(variant=variant, name=f"demo table {table_id[-3:]}")
        send(table_id, Submission(command=create, player=seated[0]))
        for submission in seating(seated):
            send(table_id, submission)
    live = list(ids)
    while live:
        for table_id in list(live):
            state = states[table_id][0]
            if state.hands_scored >= hands:
                send(table_id, Submission(command=CloseTable(reason="demo over")))
                live.remove(table_id)
                continue
            move = next_submission(state, rng)
            if move is not None:
                send(table_id, move)
        if progress is not None:
            progress.update(scored(), commands)
    if progress is not None:
        progress.finish(scored(), commands)
    return {table_id: state for table_id, (state, _) in states.items()}

"""``mighty demo``: tables of random players, end to end, and the ledger they leave.

Through the application layer (``services/app/``), the use cases the gateway serves:
players made (a pool named ``p01`` ...), tables created (``--variant``: ``mighty-5`` by
default, or any playable Mighty variant, or ``mitigati``) for ``--hands`` hands and joined
by as many players as the game has seats; the service starts each table and deals
(``services/app/steps.py``), and the seat to act plays a random legal command
(``services/players.py``) sent as a client's (``services/app/commands.py``). The projection workers run as separate processes (``python -m services.projection``).
When every table has played its hands the demo waits until the projections have applied
every feed entry (``wait_until``), then prints the players' ledger as the ledger
projection stored it.

Redis: ``REDIS_URL`` when set (under a fresh key namespace unless ``MIGHTY_NAMESPACE`` or
``--namespace`` names one, so the ledger is this run's), else a private redis-server from
the PATH, else an embedded fake Redis in this process; the last two end with the demo.
``services/cli/demo.py`` is the command: its options, and what it prints.
"""

from __future__ import annotations

import asyncio
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

from domain.registry import game_named
from domain.table import TableState
from projections import KINDS
from services.bootstrap import bootstrap, run_redis
from services.players import next_submission
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
        ids, names = asyncio.run(_play(settings, tables, hands, random.Random(seed),
                                       Progress(tables * hands) if progress else None, variant))
        positions = wiring.readers.feed_positions()
        for kind in KINDS:
            wiring.readers.wait_until(kind, positions, timeout_s=120, check=lambda: _alive(workers))
        ledger = [{"player": p.player, "name": names.get(p.player, p.player), "total": p.total}
                  for p in wiring.readers.player_ledgers()]
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


async def _play(settings: Settings, tables: int, hands: int, rng: random.Random, progress: Progress | None,
                variant: str = "mighty-5") -> tuple[dict[str, TableState], dict[str, str]]:
    """Through the application layer (``services/app/``), as the gateway plays: players
    made, each table created by its first player and joined by the others (the service
    starts it and deals), then every seat's random legal command sent as a client's
    (``app.commands.play``) until the table closes after ``hands`` hands. The tables'
    final states by table id, and the players' names by id."""
    from services.app.commands import play
    from services.app.seats import join
    from services.app.steps import service_steps_async
    from services.app.tables import create_table
    from services.bootstrap import wire_gateway
    from services.gateway.wire import NewTable
    from services.store.async_redis_store import connect_async

    game = game_named(variant)
    seats = game.players(game.make_rules(variant, {}))
    assert settings.redis_url, "run_redis fills it in"
    backend = wire_gateway(connect_async(settings.redis_url), settings)
    try:
        pool = [await backend.create_player(f"p{i:02d}") for i in range(1, max(_PLAYER_POOL, seats) + 1)]
        names = {p.player: p.name for p in pool}
        run = secrets.token_hex(3)
        ids = [f"demo-{run}-{i:03d}" for i in range(tables)]
        commands = 0
        for table_id in ids:
            seated = rng.sample(pool, seats)
            body = NewTable(game=variant, name=f"demo table {table_id[-3:]}", hands=hands, seat=0)
            await create_table(backend, seated[0].player, body, table_id)
            for seat, record in enumerate(seated[1:], start=1):
                await join(backend, table_id, record.player, seat)
            commands += seats
        states: dict[str, TableState] = {}
        live = list(ids)
        while live:
            for table_id in list(live):
                state, _ = await backend.state(table_id)
                states[table_id] = state
                move = next_submission(state, rng) if state.status == "playing" else None
                if move is None or move.player is None:  # closed after its last hand, or a deal due
                    if state.status == "closed":
                        live.remove(table_id)
                    else:
                        await service_steps_async(backend, table_id, state)
                    continue
                wire = msgspec.to_builtins(move.command)
                await play(backend, table_id, move.player, f"demo-{commands}", wire)
                commands += 1
            if progress is not None:
                progress.update(sum(s.hands_scored for s in states.values()), commands)
        if progress is not None:
            progress.finish(sum(s.hands_scored for s in states.values()), commands)
        return states, names
    finally:
        await backend.wiring.close()

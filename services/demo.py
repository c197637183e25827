"""``mighty demo``: tables of random players, end to end, and the ledger they leave.

Tables are created (``--variant``: ``mighty-5`` by default, or any playable Mighty variant,
or ``mitigati``) and as many players from a pool (``p01`` ...) as the game has seats
seated at each; the table
starts, the service deals (``services/dealer.py``) and the seat to act plays a random
legal command (``services/players.py``), all through the command handler and the event
store. The projection workers run as separate processes (``python -m services.projection``).
When every table has played its hands the demo waits until the projections have applied
every feed entry (``wait_until``), then prints the players' ledger as the ledger
projection stored it.

Redis: ``REDIS_URL`` when set (under a fresh key namespace, so the ledger is this run's),
else a private redis-server from the PATH, else an embedded fake Redis in this process.
"""

from __future__ import annotations

import argparse
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

from projections import KINDS

_PLAYER_POOL = 10


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = sub.add_parser("demo", help="play random tables end to end and print the ledger")
    demo.add_argument("--tables", type=int, default=4, help="tables played at once (default 4)")
    demo.add_argument("--hands", type=int, default=3, help="scored hands per table (default 3)")
    demo.add_argument("--seed", type=int, default=None, help="seed the players' choices (not the deals)")
    demo.add_argument("--variant", default="mighty-5",
                      help="the game at every table: a Mighty variant (default mighty-5) or mitigati")
    demo.add_argument("--json", action="store_true", help="print one JSON object: hands and ledger")
    demo.set_defaults(run=cmd_demo)


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


def cmd_demo(args: argparse.Namespace) -> int:
    if args.tables < 1 or args.hands < 1:
        sys.stderr.write("mighty demo: --tables and --hands are at least 1\n")
        return 2
    from domain.errors import RuleSetError, TableError
    from domain.registry import game_named

    try:
        game_named(args.variant).make_rules(args.variant, {})
    except (RuleSetError, TableError) as error:
        sys.stderr.write(f"mighty demo: {error.message}\n")
        return 2
    result = run_demo(args.tables, args.hands, seed=args.seed, variant=args.variant)
    if args.json:
        sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
    else:
        _print_table(result)
    return 0


def run_demo(tables: int, hands: int, *, seed: int | None = None, progress: bool = True,
             variant: str = "mighty-5") -> dict[str, Any]:
    from services.commands.tables import table_handler
    from services.logs import configure_logging
    from services.projection.read import feed_positions, player_ledgers, wait_until
    from services.redis_runtime import redis_url_for_run
    from services.store.keys import KeySpace
    from services.store.redis_store import RedisEventStore, connect

    os.environ.setdefault("MIGHTY_LOG_LEVEL", "warning")  # the demo's output is its progress line
    configure_logging()
    with contextlib.ExitStack() as stack:
        url = redis_url_for_run(stack)
        namespace = f"demo-{secrets.token_hex(4)}" if os.environ.get("REDIS_URL") else "mighty"
        space = KeySpace(namespace=namespace)
        client = connect(url)
        stack.callback(client.close)
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mighty-demo-")))
        workers = stack.enter_context(_workers(url, namespace, logs))
        handler = table_handler(RedisEventStore(client, keys=space))
        played = _play(handler, tables, hands, random.Random(seed), Progress(tables * hands) if progress else None,
                       variant)
        positions = feed_positions(client, space)
        for kind in KINDS:
            wait_until(client, space, kind, positions, timeout_s=120, check=lambda: _alive(workers))
        ledger = [{"player": p.player, "total": p.total} for p in player_ledgers(client, space)]
    return {"hands": played, "ledger": ledger}


@contextlib.contextmanager
def _workers(url: str, namespace: str, logs: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """One worker process of each kind, stopped (SIGTERM) on the way out."""
    env = {**os.environ, "MIGHTY_LOG_FORMAT": "json", "MIGHTY_LOG_LEVEL": os.environ.get("MIGHTY_LOG_LEVEL", "warning")}
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for kind in KINDS:
            log = open(logs / f"{kind}.log", "wb")  # noqa: SIM115 - closed with the process
            argv = [sys.executable, "-m", "services.projection", kind, "--redis-url", url,
                    "--namespace", namespace, "--lease-ms", "2000"]
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
          variant: str = "mighty-5") -> int:
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
    return scored()


def _print_table(result: dict[str, Any]) -> None:
    rows = result["ledger"]
    sys.stdout.write(f"{result['hands']} hands played; the ledger:\n")
    sys.stdout.write(f"{'player':<8} {'total':>6}\n")
    for row in rows:
        sys.stdout.write(f"{row['player']:<8} {row['total']:>6}\n")
    sys.stdout.write(f"{'sum':<8} {sum(r['total'] for r in rows):>6}\n")

"""`mighty bench store`: random legal table commands through the command handler.

64 tables are seated and started; each table's next random legal commands are chosen (as
bots would choose them), then sent, the tables interleaved, through
``CommandHandler.handle`` against Redis: REDIS_URL when set, else a private redis-server
started for the run (else an embedded fake). ``--concurrency N`` sends from N threads,
each owning its share of the tables (default 1). In the same run, from the same client
and with the same threads, the very same appends (the event batches the commands
produced) go to fresh tables through the bare Lua script, their arguments prepared in
advance: that is the raw append rate the handler is compared with. The two phases
alternate in rounds. Prints one JSON object (docs/store.md, "The benchmark").

``--async`` runs the asyncio path instead: ``--tables`` tables (200 in the figures) in
flight at once from one event loop, each sending its planned commands one after the
other through ``AsyncCommandHandler.handle`` over ``AsyncRedisEventStore`` (whose appends
go out pipelined). Between its rounds the same appends go through today's sync bare
script from one thread (``raw_append_per_s``, as above), against the same server;
``async_ratio`` is the one rate over the other.

Every key the run writes lives under its own namespace and is deleted at the end."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import platform
import random
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import redis
import structlog

from domain.table import CreateTable, Submission
from services.commands.handler import AsyncCommandHandler
from services.commands.tables import TableDecider, TableHandler, table_handler
from services.logs import json_processors
from services.players import next_submission, seating
from services.redis_runtime import redis_url_for_run
from services.store.async_redis_store import AsyncRedisEventStore, connect_async
from services.store.base import GENESIS, StoredEvent, chain_hashes
from services.store.cluster import SyncClient
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore, connect

PLAYERS = ["ana", "bo", "cy", "di", "ed"]


class BufferedLogger:
    """A structlog logger that writes lines into a buffer and leaves flushing to it.

    structlog's WriteLogger flushes every line: one write(2) per command, and in a
    threaded process each such system call hands the GIL to another thread and back.
    """

    def __init__(self, file: Any) -> None:
        self._write = file.write

    def msg(self, message: str) -> None:
        self._write(message + "\n")

    debug = info = warning = warn = error = err = critical = exception = log = msg


def configure_logging(mode: str) -> None:
    """How the one line per command is written during the run:

    ``json``: rendered as JSON into a 64 KiB buffer over /dev/null (no flush per line);
    ``json-flush``: rendered and flushed line by line (structlog's WriteLogger);
    ``off``: filtered out before rendering, what a WARNING level costs.
    """
    level = logging.WARNING if mode == "off" else logging.INFO
    sink = open(os.devnull, "w", buffering=1 << 16)  # noqa: SIM115 - lives as long as the process
    factory: Any = structlog.WriteLoggerFactory(sink)
    if mode == "json":
        factory = lambda *_: BufferedLogger(sink)  # noqa: E731
    structlog.configure(
        processors=json_processors(),  # a production JSON line (services.logs)
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=factory,
        cache_logger_on_first_use=True,
    )


def set_up_tables(handler: TableHandler, table_ids: Sequence[str]) -> None:
    for table_id in table_ids:
        subs = [Submission(CreateTable(), PLAYERS[0]), *seating(PLAYERS)]
        for n, sub in enumerate(subs):
            handler.handle(table_id, sub, command_id=f"setup-{n}")


AsyncTableHandler = AsyncCommandHandler[Any, Submission, Any]
CPU_SECONDS: list[float] = []  # the client's CPU time in each async round


async def set_up_tables_async(handler: AsyncTableHandler, table_ids: Sequence[str]) -> None:
    async def set_up(table_id: str) -> None:
        subs = [Submission(CreateTable(), PLAYERS[0]), *seating(PLAYERS)]
        for n, sub in enumerate(subs):
            await handler.handle(table_id, sub, command_id=f"setup-{n}")

    await asyncio.gather(*(set_up(t) for t in table_ids))


async def run_commands_async(
    handler: AsyncTableHandler, plans: dict[str, list[Submission]], prefix: str
) -> tuple[float, list[float]]:
    """Every table in flight at once, each sending its plan in order; time ``handle``."""
    latencies: list[float] = []
    clock = time.perf_counter

    async def play(table_id: str, plan: list[Submission]) -> None:
        handle, took = handler.handle, latencies.append
        for n, submission in enumerate(plan):
            started = clock()
            await handle(table_id, submission, command_id=f"{prefix}{n}")
            took(clock() - started)

    started, cpu = clock(), time.process_time()
    await asyncio.gather(*(play(t, plan) for t, plan in plans.items()))
    elapsed = clock() - started
    CPU_SECONDS.append(time.process_time() - cpu)
    return elapsed, latencies


def in_threads(concurrency: int, work: Callable[[int], None]) -> float:
    """Run ``work(i)`` in ``concurrency`` threads started together; the wall time."""
    barrier = threading.Barrier(concurrency + 1)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            work(i)
        except BaseException as error:  # noqa: BLE001 - re-raised below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(concurrency)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise errors[0]
    return elapsed


def plan_commands(
    handler: TableHandler, table_ids: list[str], per_table: int, rng: random.Random
) -> dict[str, list[Submission]]:
    """Each table's next ``per_table`` random legal commands, chosen ahead of the timed
    phase by playing them on a copy of the table's state (the rules are pure, so the
    handler will decide them to the same events). Choosing them is the bots' work, done
    elsewhere in a real deployment: it stays out of the handler's time, as preparing the
    arguments stays out of the bare script's."""
    decider = TableDecider()
    plans: dict[str, list[Submission]] = {}
    for table_id in table_ids:
        cached = handler.cached(table_id)
        assert cached is not None, "set up by this handler: the cache is current"
        state, plan = cached[0], []
        for _ in range(per_table):
            submission = next_submission(state, rng)
            assert submission is not None
            for event in decider.decide(state, submission):
                state = decider.evolve(state, event)
            plan.append(submission)
        plans[table_id] = plan
    return plans


def run_commands(
    handler: TableHandler,
    plans: dict[str, list[Submission]],
    concurrency: int,
    prefix: str,
) -> tuple[float, list[float]]:
    """Send the planned commands, each thread its own tables in turn; time ``handle``."""
    latencies: list[list[float]] = [[] for _ in range(concurrency)]
    table_ids = list(plans)

    def work(i: int) -> None:
        mine = [(t, plans[t]) for t in table_ids[i::concurrency]]
        took = latencies[i]
        for n in range(len(mine[0][1])):
            for table_id, plan in mine:
                started = time.perf_counter()
                handler.handle(table_id, plan[n], command_id=f"{prefix}{n}")
                took.append(time.perf_counter() - started)

    elapsed = in_threads(concurrency, work)
    return elapsed, [x for per_thread in latencies for x in per_thread]


def batches_of(events: list[StoredEvent]) -> list[list[bytes]]:
    """The stream cut back into appends: consecutive events of one command id."""
    batches: list[list[bytes]] = []
    last = None
    for event in events:
        if event.command_id != last:
            batches.append([])
            last = event.command_id
        batches[-1].append(event.data)
    return batches


def raw_calls(
    store: RedisEventStore,
    table_id: str,
    batches: list[list[bytes]],
    head: tuple[int, str],
    prefix: str,
) -> tuple[list[Any], tuple[int, str]]:
    """Ready-made (keys, args) for the bare script: the same appends on another table."""
    keys = store.keys.table(table_id).as_list()
    calls: list[Any] = []
    version, digest = head
    for n, batch in enumerate(batches):
        hashes = chain_hashes(digest, batch, f"{prefix}{n}")
        args: list[Any] = [table_id, version, f"{prefix}{n}", b"{}", digest, len(batch)]
        for data, event_hash in zip(batch, hashes, strict=True):
            args += [data, event_hash]
        calls.append((keys, args))
        version, digest = version + len(batch), hashes[-1]
    return calls, (version, digest)


def run_raw(store: RedisEventStore, calls: list[list[Any]], concurrency: int) -> float:
    """The bare script through the same client: EVALSHA and nothing else."""
    evalsha, sha = store.client.evalsha, store.script_sha

    def work(i: int) -> None:
        for keys, args in calls[i]:
            reply: Any = evalsha(sha, 4, *keys, *args)
            assert reply[0] == b"ok", reply

    return in_threads(concurrency, work)


def delete_namespace(client: SyncClient, namespace: str) -> None:
    for key in client.scan_iter(match=f"{namespace}:*", count=1000):
        client.delete(key)


def server_info(client: SyncClient) -> dict[str, Any]:
    try:
        info: Any = client.info("server")
    except redis.ResponseError:  # the embedded fake has no INFO
        return {"redis_version": "embedded fakeredis"}
    return dict(info)


def redis_cpu_s(client: redis.Redis) -> float:
    """The server's CPU time so far (user + system), or 0 where INFO has no figures."""
    try:
        info: Any = client.info("cpu")
    except redis.ResponseError:
        return 0.0
    return float(info.get("used_cpu_user", 0.0)) + float(info.get("used_cpu_sys", 0.0))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(args: argparse.Namespace, url: str) -> dict[str, object]:
    namespace = f"mightybench-{secrets.token_hex(4)}"
    client = connect(url, max_connections=args.concurrency + 4)
    store = RedisEventStore(client, keys=KeySpace(namespace=namespace))
    try:
        handler = table_handler(store, cache_size=args.tables * 2)
        table_ids = [f"bench{n}" for n in range(args.tables)]
        set_up_tables(handler, table_ids)
        raw_heads = {t: (0, GENESIS) for t in table_ids}
        elapsed = raw_elapsed = 0.0
        round_ratios: list[float] = []
        latencies: list[float] = []
        done = raw_done = events = 0
        # Rounds alternate the two phases, so both meet the same machine (other load,
        # CPU frequency) and the ratio compares like with like.
        rng = random.Random(args.seed)
        per_table = max(1, args.commands // (args.rounds * args.tables))
        for round_ in range(args.rounds):
            versions = {t: store.head(t).version for t in table_ids}
            plans = plan_commands(handler, table_ids, per_table, rng)
            seconds, took = run_commands(handler, plans, args.concurrency, f"r{round_}-")
            elapsed += seconds
            latencies += took
            done += len(took)
            calls: list[list[Any]] = [[] for _ in range(args.concurrency)]
            for n, table_id in enumerate(table_ids):
                batches = batches_of(store.read(table_id, after_version=versions[table_id]))
                events += sum(len(b) for b in batches)
                prepared, raw_heads[table_id] = raw_calls(
                    store, f"raw{n}", batches, raw_heads[table_id], prefix=f"r{round_}-"
                )
                calls[n % args.concurrency] += prepared
            raw_seconds = run_raw(store, calls, args.concurrency)
            raw_done += sum(len(c) for c in calls)
            raw_elapsed += raw_seconds
            round_ratios.append((len(took) / seconds) / (sum(len(c) for c in calls) / raw_seconds))
        info = server_info(client)
        commands_per_s = done / elapsed
        raw_per_s = raw_done / raw_elapsed
        return {
            "bench": "store",
            "commands_per_s": round(commands_per_s, 1),
            "raw_append_per_s": round(raw_per_s, 1),
            "ratio": round(commands_per_s / raw_per_s, 3),
            "ratio_per_round": [round(r, 3) for r in round_ratios],
            "p50_ms": round(percentile(latencies, 0.50) * 1000, 3),
            "p99_ms": round(percentile(latencies, 0.99) * 1000, 3),
            "commands": done,
            "raw_appends": raw_done,
            "events": events,
            "tables": args.tables,
            "concurrency": args.concurrency,
            "rounds": args.rounds,
            "log": args.log,
            "redis_version": info.get("redis_version", "unknown"),
            "redis": "REDIS_URL" if args.url_from_env else args.redis_kind,
            "python": platform.python_version(),
        }
    finally:
        delete_namespace(client, namespace)
        client.close()


def run_async(args: argparse.Namespace, url: str) -> dict[str, object]:
    namespace = f"mightybench-{secrets.token_hex(4)}"
    client = connect(url, max_connections=4)
    store = RedisEventStore(client, keys=KeySpace(namespace=namespace))
    try:
        with asyncio.Runner() as runner:
            aclient = connect_async(url)
            try:
                return _run_async(args, runner, store, aclient)
            finally:
                runner.run(aclient.aclose())
    finally:
        delete_namespace(client, namespace)
        client.close()


def _run_async(
    args: argparse.Namespace, runner: asyncio.Runner, store: RedisEventStore, aclient: Any
) -> dict[str, object]:
    astore = AsyncRedisEventStore(aclient, keys=store.keys)
    handler: AsyncTableHandler = AsyncCommandHandler(
        astore, TableDecider(), cache_size=args.tables * 2
    )
    table_ids = [f"bench{n}" for n in range(args.tables)]
    runner.run(set_up_tables_async(handler, table_ids))
    raw_heads = {t: (0, GENESIS) for t in table_ids}
    elapsed = raw_elapsed = 0.0
    round_ratios: list[float] = []
    latencies: list[float] = []
    done = raw_done = events = 0
    rng = random.Random(args.seed)
    per_table = max(1, args.commands // (args.rounds * args.tables))
    sync_view: Any = handler  # plan_commands only reads the cache (no I/O)
    server_cpu_total = 0.0
    for round_ in range(args.rounds):
        versions = {t: store.head(t).version for t in table_ids}
        plans = plan_commands(sync_view, table_ids, per_table, rng)
        server_cpu = redis_cpu_s(store.client)
        seconds, took = runner.run(run_commands_async(handler, plans, f"r{round_}-"))
        server_cpu_total += redis_cpu_s(store.client) - server_cpu
        elapsed += seconds
        latencies += took
        done += len(took)
        calls: list[Any] = []
        for n, table_id in enumerate(table_ids):
            batches = batches_of(store.read(table_id, after_version=versions[table_id]))
            events += sum(len(b) for b in batches)
            prepared, raw_heads[table_id] = raw_calls(
                store, f"raw{n}", batches, raw_heads[table_id], prefix=f"r{round_}-"
            )
            calls += prepared
        raw_seconds = run_raw(store, [calls], 1)
        raw_done += len(calls)
        raw_elapsed += raw_seconds
        round_ratios.append((len(took) / seconds) / (len(calls) / raw_seconds))
    info = server_info(store.client)
    commands_per_s = done / elapsed
    raw_per_s = raw_done / raw_elapsed
    return {
        "bench": "store-async",
        "async_commands_per_s": round(commands_per_s, 1),
        "raw_append_per_s": round(raw_per_s, 1),
        "async_ratio": round(commands_per_s / raw_per_s, 3),
        "ratio_per_round": [round(r, 3) for r in round_ratios],
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 3),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 3),
        # CPU per command (µs) holds still while the machine is shared; rates do not
        "client_cpu_us_per_command": round(sum(CPU_SECONDS) / done * 1e6, 1),
        "server_cpu_us_per_command": round(server_cpu_total / done * 1e6, 1),
        "commands": done,
        "raw_appends": raw_done,
        "events": events,
        "tables": args.tables,
        "rounds": args.rounds,
        "log": args.log,
        "redis_version": info.get("redis_version", "unknown"),
        "redis": "REDIS_URL" if args.url_from_env else args.redis_kind,
        "python": platform.python_version(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench store")
    parser.add_argument("--tables", type=int, default=64)
    parser.add_argument("--commands", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log", choices=["json", "json-flush", "off"], default="json")
    parser.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    parser.add_argument("--async", dest="use_async", action="store_true",
                        help="the asyncio path: every table in flight from one event loop")
    args = parser.parse_args(argv)
    if args.tables < args.concurrency:
        parser.error("--tables must be at least --concurrency (each thread owns its tables)")
    configure_logging(args.log)
    with contextlib.ExitStack() as stack:
        args.url_from_env = bool(os.environ.get("REDIS_URL"))
        args.redis_kind = "private redis-server" if shutil.which("redis-server") else "embedded"
        url = redis_url_for_run(stack)
        print(json.dumps(run_async(args, url) if args.use_async else run(args, url)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

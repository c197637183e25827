"""`mighty bench soak`: every process's memory, Redis's per finished hand, and the gateway's
sockets over a long run (docs/reliability.md, *Soak*).

Runs the service as ``mighty serve`` does (a private redis-server and every part: views,
ledger, directory, ratings, bots, timers, the archive worker, one gateway), with the
archive on ``MIGHTY_ARCHIVE_URL`` or a private PostgreSQL (``services/archive/runtime.py``)
and a short archive delay (``--archive-after-s``, a pass every ``--archive-interval-s``),
so that the tables closed during the run are archived within it. Then for ``--minutes``
it drives it as its clients would:

- **players** (``--players``): each creates a mighty-5 table with four bots (30 s turns),
  follows it over WebSocket and plays its seat there until the table is closed (its
  ``--hands`` played), then creates another; when the run is over, it leaves its seat
  (a bot plays it to the match's end);
- **spectators** (``--spectators``): each connects to a table and leaves in one of the
  ways a client leaves, in turn: a close after a view or two, a vanished connection (no
  close frame), the review's ping-pong-close past the last version, a frame over 16 KiB,
  a socket held a few seconds; then again;
- **lobby readers** (``--readers``): ``GET /tables`` and a table, over and over.

The service runs with quotas far above what the run asks for (``GENEROUS``), so that
no request of the bench is refused 429 by them: it measures the gateway, not its quotas.

Every ``--sample-s`` it samples every process's RSS (``/proc/<pid>/status``), the
gateway's ``mighty_open_sockets``, the ESTABLISHED TCP connections to its port
(``/proc/net/tcp``), the live tables (open or playing, from the lobby), Redis's
``used_memory``, the finished hands (the directory's ``hands_played`` of the tables in
Redis, the archive's hands of those in PostgreSQL) and the archived tables. Prints one
JSON object: the gateway's RSS after warm-up (``--warmup-minutes``) at its start and at
the end, the slope of a least-squares line through the samples after warm-up (MB per
minute), the same for every process (``processes``), the largest |gauge - connections|
and |gauge - the bench's own open sockets| over the samples, the live tables, and after
the clients have stopped: the gauge and the connections (both should be 0). Then, once
the archive worker has taken every table (at most ``--archive-wait-s``):
``redis_bytes_per_finished_hand_after_archive`` (``used_memory`` grown from the start,
over the finished hands) and ``index_entry_bytes_per_table`` (``MEMORY USAGE`` of the
archive's index hashes over the archived tables: what Redis keeps of one), and in
``redis`` the keys' bytes per finished hand by what they hold (``bench/memory.py``'s
grouping), all of them and those with no TTL (``lasting``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import msgspec
import websockets

from bench.archive import index_entry_bytes
from bench.memory import _per, measure
from projections.directory import CLOSED_DOC, DIRECTORY_DOC, decode_entry
from services.archive.keys import ArchiveKeys
from services.archive.postgres import PostgresArchive
from services.archive.runtime import archive_url_for_run
from services.archive.summary import CUT_SHORT, REDEALT
from services.bots.timers import timers_key
from services.projection.keys import ProjectionKeys
from services.redis_runtime import free_port, start_private_redis
from services.serve import parts
from services.settings import QUOTAS, Settings
from services.store.keys import KeySpace
from services.store.redis_store import connect

PARTS = ("views", "ledger", "directory", "ratings", "bots", "timers", "archive", "gateway")
TURN_SECONDS = 30  # a player's turn: a table a player left still ends (the timer worker plays it)
# Every quota (per address, per player) far above what a run asks for: the bench's clients
# all come from one address, and a player makes a table after another for the whole run.
GENEROUS: dict[str, Any] = {name: 1_000_000 for name in QUOTAS if name not in ("quota_window_s", "player_ttl_s")}


# ---------------------------------------------------------------- what is sampled


def established_connections(port: int) -> int:
    """ESTABLISHED TCP connections whose local port is ``port`` (the server's side of each
    client's connection), from ``/proc/net/tcp`` and ``/proc/net/tcp6``."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as lines:
                next(lines, None)
                for line in lines:
                    fields = line.split()
                    if len(fields) > 3 and fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        count += 1
        except FileNotFoundError:
            continue
    return count


def rss_mb(pid: int) -> float:
    """The resident set of process ``pid``, in MB (``VmRSS``)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def gateway_metrics(base: str) -> dict[str, float]:
    """The gateway's ``/metrics``, each sample by its name and labels."""
    return {name: float(value) for line in httpx.get(base + "/metrics", timeout=10).text.splitlines()
            if line and not line.startswith("#") for name, value in [line.rsplit(" ", 1)]}


def open_sockets_gauge(base: str) -> float:
    return gateway_metrics(base)["mighty_open_sockets"]


# what the gateway's memory aids say at the end (docs/reliability.md, Soak)
MEMORY_METRICS = ("mighty_gc_runs", "mighty_gc_found_objects", "mighty_gc_seconds",
                  'mighty_cached_tables{kind="in_play"}', 'mighty_cached_tables{kind="closed"}')


def slope_per_minute(points: list[tuple[float, float]]) -> float:
    """The least-squares slope of (seconds, value) points, per minute."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var == 0:
        return 0.0
    return sum((t - mean_t) * (v - mean_v) for t, v in points) / var * 60


def process_rss(samples: list[dict[str, Any]], warmup_s: float) -> dict[str, dict[str, float | None]]:
    """Each process's RSS (the samples' ``rss`` maps, MB by part): after warm-up (the
    first sample at or after ``warmup_s``), at the end, the largest, and the
    least-squares slope after warm-up (MB per minute)."""
    warm = [s for s in samples if s["t"] >= warmup_s] or samples
    names = sorted({name for s in samples for name in s.get("rss", {})})
    table: dict[str, dict[str, float | None]] = {}
    for name in names:
        points = [(float(s["t"]), float(s["rss"][name])) for s in warm if name in s.get("rss", {})]
        table[name] = {
            "after_warmup_mb": points[0][1] if points else None,
            "end_mb": points[-1][1] if points else None,
            "max_mb": max((float(s["rss"][name]) for s in samples if name in s.get("rss", {})), default=None),
            "slope_mb_per_min": round(slope_per_minute(points), 3),
        }
    return table


# what the archive counts as a finished hand: every hand row but one cut short by the
# close or redealt (the directory's ``hands_played``: the game's ``ends_hand`` events)
_ARCHIVED_HANDS = ("SELECT t.table_id, count(h.hand_no) FILTER (WHERE h.status NOT IN (%s, %s)) "
                   "FROM archive_tables t LEFT JOIN archive_hands h USING (namespace, table_id) "
                   "WHERE t.namespace = %s GROUP BY t.table_id")


@dataclass
class Store:
    """What the bench reads of Redis and PostgreSQL beside the service."""

    client: Any
    space: KeySpace
    archive: PostgresArchive

    def tables(self) -> tuple[dict[str, int], int, int]:
        """Each table the directory holds (open, playing or closed and not archived yet)
        with its hands played; how many are live (not closed) and how many closed."""
        keys = ProjectionKeys(self.space, "directory")
        pipe = self.client.pipeline(transaction=False)
        for partition in range(self.space.partitions):
            pipe.hvals(keys.doc(partition, DIRECTORY_DOC))
            pipe.hvals(keys.doc(partition, CLOSED_DOC))
        found = pipe.execute()
        live = [decode_entry(data) for values in found[0::2] for data in values]
        closed = [decode_entry(data) for values in found[1::2] for data in values]
        return {e.table_id: e.hands_played for e in live + closed}, len(live), len(closed)

    def archived_hands(self) -> dict[str, int]:
        """Each table PostgreSQL holds with its finished hands."""
        with self.archive.connection() as conn:
            rows = conn.execute(_ARCHIVED_HANDS, (CUT_SHORT, REDEALT, self.space.namespace)).fetchall()
        return {str(table): int(hands) for table, hands in rows}

    def archived_tables(self) -> int:
        """The archived tables' index entries (``services/archive/keys.py``)."""
        keys = ArchiveKeys(self.space)
        pipe = self.client.pipeline(transaction=False)
        for partition in range(self.space.partitions):
            pipe.hlen(keys.index(partition))
        return sum(int(n) for n in pipe.execute())

    def sample(self) -> dict[str, int]:
        """``used_memory``, the finished hands (those of the tables in Redis, then those
        PostgreSQL holds: a table counted once), the archived tables, the tables live and
        closed in Redis, and the turns with a deadline still set (a closed table's last
        one stays until it is due: ``services/bots/timers.py``)."""
        in_redis, live, closed = self.tables()
        hands = {**in_redis, **self.archived_hands()}
        return {"used_memory": int(self.client.info("memory")["used_memory"]),
                "finished_hands": sum(hands.values()), "archived_tables": self.archived_tables(),
                "live_in_redis": live, "closed_in_redis": closed,
                "deadlines_set": int(self.client.zcard(timers_key(self.space)))}


def per_finished_hand(start: dict[str, int], end: dict[str, int]) -> float | None:
    """Redis bytes (``used_memory`` grown from ``start`` to ``end``) per finished hand."""
    if not end["finished_hands"]:
        return None
    return round((end["used_memory"] - start["used_memory"]) / end["finished_hands"], 1)


# ---------------------------------------------------------------- the service


@dataclass(frozen=True)
class Running:
    """The service as the bench started it."""

    base: str  # the gateway's base URL
    port: int  # the gateway's port
    pids: dict[str, int]  # each part's process id, by its name
    store: Store


@contextlib.contextmanager
def service(root: Path, settings_changes: dict[str, Any], archive_url: str,
            archive_interval_s: float) -> Iterator[Running]:
    """Every part of the service on a private redis-server, the archive worker on
    ``archive_url`` (a pass every ``archive_interval_s``)."""
    redis = start_private_redis(root / "redis", appendonly=False)
    port = free_port()
    settings = msgspec.structs.replace(
        Settings(redis_url=redis.url, namespace=f"soak-{secrets.token_hex(3)}", namespace_chosen=True,
                 log_format="json", log_level="warning", port=port, rate_commands=100_000,
                 sockets_per_address=10_000, archive_url=archive_url, **GENEROUS),
        **settings_changes)
    env = {**os.environ, **settings.as_env()}
    archive = PostgresArchive(archive_url, namespace=settings.namespace)
    archive.migrate()  # before the first sample reads it (the worker would, as it starts)
    client = connect(redis.url)
    processes: list[subprocess.Popen[bytes]] = []
    pids: dict[str, int] = {}
    try:
        for part in parts(settings):
            if part.name not in PARTS:
                continue
            argv = [*part.argv, "--interval-s", str(archive_interval_s)] if part.name == "archive" else part.argv
            with open(root / f"{part.name}.log", "ab") as log:
                process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
            processes.append(process)
            pids[part.name] = process.pid
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(base + "/readyz", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the gateway never became ready (logs in {root})")
            time.sleep(0.2)
        yield Running(base, port, pids, Store(client, KeySpace(settings.partitions, settings.namespace), archive))
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        archive.close()
        client.close()
        redis.stop()


# ---------------------------------------------------------------- the clients


class Run:
    def __init__(self, base: str, until: float, seed: int) -> None:
        self.base = base
        self.ws = base.replace("http://", "ws://", 1)
        self.until = until
        self.rng = random.Random(seed)
        self.tables: list[str] = []
        self.counts: Counter[str] = Counter()
        self.open_sockets = 0  # this process's sockets to the gateway, open now

    def going(self) -> bool:
        return time.monotonic() < self.until

    @contextlib.asynccontextmanager
    async def socket(self, url: str) -> Any:
        async with websockets.connect(url, max_size=2**22, open_timeout=10) as ws:
            self.open_sockets += 1
            try:
                yield ws
            finally:
                self.open_sockets -= 1


async def guest(http: httpx.AsyncClient, name: str) -> str:
    made = await http.post("/api/v1/players", json={"name": name})
    made.raise_for_status()
    token: str = made.json()["token"]
    return token


def choose(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    legal = view["legal"]
    passes = [c for c in legal if c["type"] == "pass"]
    if passes and rng.random() < 0.7:
        return dict(passes[0])
    command = dict(rng.choice(legal))
    if command["type"] == "discard" and "count" in command:
        return {"type": "discard", "cards": rng.sample(command["from"], command["count"])}
    return command


async def player(run: Run, http: httpx.AsyncClient, number: int, hands: int) -> None:
    token = await guest(http, f"Soak{number}")
    bearer = {"Authorization": f"Bearer {token}"}
    while run.going():
        made = await http.post("/api/v1/tables", headers=bearer, json={
            "game": "mighty-5", "seat": 0, "hands": hands, "turn_seconds": TURN_SECONDS,
            "bots": {str(seat): "beginner" for seat in range(1, 5)}})
        if made.status_code != 201:
            run.counts[f"create_{made.status_code}"] += 1
            await asyncio.sleep(1)
            continue
        table = made.json()["table"]
        run.tables.append(table)
        run.tables[:] = run.tables[-20:]
        if await play(run, table, token):
            run.counts["tables_played"] += 1
        else:
            await leave(run, http, table, bearer)


async def leave(run: Run, http: httpx.AsyncClient, table: str, bearer: dict[str, str]) -> None:
    """The run is over: the player leaves its seat (a bot plays it: the match ends and
    the table closes, so the archive can take every table the run made)."""
    done = await http.post(f"/api/v1/tables/{table}/leave", headers=bearer)
    run.counts["seats_left_at_stop" if done.status_code == 204 else f"leave_at_stop_{done.status_code}"] += 1


async def play(run: Run, table: str, token: str) -> bool:
    """Play seat 0 of ``table`` until the table is closed (every hand of its match
    played: True), or the run is over (False)."""
    after = 0
    while run.going():
        try:
            async with run.socket(f"{run.ws}/api/v1/tables/{table}/stream?after={after}&token={token}") as ws:
                async for raw in ws:
                    frame = json.loads(raw)
                    if frame.get("type") != "view":
                        continue
                    view = frame["view"]
                    after = frame["version"]
                    if view.get("status") == "closed":
                        return True
                    if view.get("to_act") == 0 and view.get("legal"):
                        await ws.send(json.dumps({"type": "command", "id": f"c{after}",
                                                  "command": choose(view, run.rng)}))
                        run.counts["commands"] += 1
                    if not run.going():
                        return False
        except (websockets.ConnectionClosed, OSError, TimeoutError):
            run.counts["player_reconnects"] += 1
            await asyncio.sleep(0.2)
    return False


async def spectator(run: Run) -> None:
    patterns = ("close_after_views", "vanish", "ping_pong_close", "frame_too_big", "hold")
    turn = run.rng.randrange(len(patterns))
    while run.going():
        if not run.tables:
            await asyncio.sleep(0.5)
            continue
        table = run.rng.choice(run.tables)
        pattern = patterns[turn % len(patterns)]
        turn += 1
        after = 100_000 if pattern == "ping_pong_close" else 0
        try:
            async with run.socket(f"{run.ws}/api/v1/tables/{table}/stream?after={after}") as ws:
                if pattern == "close_after_views":
                    for _ in range(run.rng.randint(1, 3)):
                        await asyncio.wait_for(ws.recv(), 10)
                elif pattern == "vanish":
                    await asyncio.wait_for(ws.recv(), 10)
                    ws.transport.abort()  # no close frame: the connection just goes
                elif pattern == "ping_pong_close":
                    await ws.send('{"type":"ping"}')
                    await asyncio.wait_for(ws.recv(), 10)
                elif pattern == "frame_too_big":
                    await ws.send("x" * (17 * 1024))
                    with contextlib.suppress(websockets.ConnectionClosed):
                        while True:
                            await asyncio.wait_for(ws.recv(), 10)
                else:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(run.rng.uniform(1, 5)):
                            async for _ in ws:
                                pass
            run.counts[f"spectator_{pattern}"] += 1
        except (websockets.ConnectionClosed, OSError, TimeoutError):
            run.counts[f"spectator_{pattern}_cut"] += 1
        await asyncio.sleep(run.rng.uniform(0, 0.2))


async def reader(run: Run, http: httpx.AsyncClient) -> None:
    while run.going():
        try:
            await http.get("/api/v1/tables")
            if run.tables:
                await http.get(f"/api/v1/tables/{run.rng.choice(run.tables)}")
            run.counts["lobby_reads"] += 1
        except httpx.HTTPError:
            run.counts["lobby_errors"] += 1
        await asyncio.sleep(0.2)


async def live_tables(http: httpx.AsyncClient) -> int:
    """The tables open or playing, as the lobby lists them (every page)."""
    count = 0
    for status in ("open", "playing"):
        cursor: str | None = None
        while True:
            params = {"status": status, "limit": "200", **({"cursor": cursor} if cursor else {})}
            page = (await http.get("/api/v1/tables", params=params)).raise_for_status().json()
            count += len(page["tables"])
            cursor = page.get("cursor")
            if not cursor:
                break
    return count


async def sampler(run: Run, http: httpx.AsyncClient, service: Running, every_s: float, started: float,
                  samples: list[dict[str, Any]]) -> None:
    while run.going():
        await asyncio.sleep(every_s)
        gauge = await asyncio.to_thread(open_sockets_gauge, run.base)
        rss = {name: round(rss_mb(pid), 2) for name, pid in service.pids.items()}
        samples.append({"t": round(time.monotonic() - started, 1), "rss_mb": rss["gateway"],
                        "gauge": gauge, "connections": established_connections(service.port),
                        "client_sockets": run.open_sockets, "live_tables": await live_tables(http),
                        "rss": rss, **await asyncio.to_thread(service.store.sample)})


async def archived_all(store: Store, wait_s: float) -> tuple[dict[str, int], float]:
    """Wait (at most ``wait_s``) until no table is left in Redis, live or closed (the
    archive worker has taken every one) and no turn deadline is left (the timers are at
    rest). The last sample and the seconds waited."""
    started = time.monotonic()
    while True:
        found = await asyncio.to_thread(store.sample)
        waited = time.monotonic() - started
        if not (found["live_in_redis"] or found["closed_in_redis"] or found["deadlines_set"]) or waited > wait_s:
            return found, round(waited, 1)
        await asyncio.sleep(2)


async def drive(service: Running, args: argparse.Namespace) -> dict[str, Any]:
    base, port = service.base, service.port
    before = await asyncio.to_thread(measure, service.store.client, service.store.space)
    start = await asyncio.to_thread(service.store.sample)
    started = time.monotonic()
    run = Run(base, started + args.minutes * 60, args.seed)
    samples: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=base, timeout=15) as http:
        tasks = [asyncio.create_task(player(run, http, i, args.hands)) for i in range(args.players)]
        tasks += [asyncio.create_task(spectator(run)) for _ in range(args.spectators)]
        tasks += [asyncio.create_task(reader(run, http)) for _ in range(args.readers)]
        tasks.append(asyncio.create_task(sampler(run, http, service, args.sample_s, started, samples)))
        await asyncio.sleep(args.minutes * 60)
        done, pending = await asyncio.wait(tasks, timeout=30)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        failures = [repr(t.exception())[:200] for t in done if not t.cancelled() and t.exception() is not None]
    await asyncio.sleep(2)  # the clients are gone: so should their sockets be
    metrics = await asyncio.to_thread(gateway_metrics, base)
    settled = {"gauge": metrics["mighty_open_sockets"], "connections": established_connections(port),
               **{name: metrics.get(name) for name in MEMORY_METRICS}}
    end, waited = await archived_all(service.store, args.archive_wait_s)
    after = await asyncio.to_thread(measure, service.store.client, service.store.space)
    end = {**end, "used_memory": after["used_memory"]}
    index_bytes = index_entry_bytes(service.store.client, ArchiveKeys(service.store.space),
                                    service.store.space.partitions)
    redis = redis_summary(start, end, before, after, index_bytes, waited)
    return summary(samples, settled, args.warmup_minutes, run.counts, failures, redis)


def redis_summary(start: dict[str, int], end: dict[str, int], before: dict[str, Any], after: dict[str, Any],
                  index_bytes: int, waited_s: float) -> dict[str, Any]:
    """Redis at the start and once every table is archived: ``used_memory`` per finished
    hand, against what the archive keeps per table (its index entry)."""
    hands = end["finished_hands"]
    archived = end["archived_tables"]
    return {
        "redis_bytes_per_finished_hand_after_archive": per_finished_hand(start, end),
        "index_entry_bytes_per_table": round(index_bytes / archived) if archived else None,
        "start": start,
        "end": end,
        "archive_waited_s": waited_s,
        "keys_bytes_per_finished_hand": round((after["bytes"] - before["bytes"]) / hands, 1) if hands else None,
        # the keys with no TTL: what stays once the expiring ones (the gateway's command ids
        # of the last 15 minutes, ...) have gone
        "lasting_keys_bytes_per_finished_hand": round(
            (after["bytes"] - after["expiring_bytes"] - before["bytes"] + before["expiring_bytes"]) / hands, 1)
        if hands else None,
        "keys_bytes_per_finished_hand_by_category": _per(after["by_category"], before["by_category"], hands)
        if hands else {},
        "lasting_keys_bytes_per_finished_hand_by_category": _per(
            after["lasting_by_category"], before["lasting_by_category"], hands) if hands else {},
        "keys_start": before["keys"],
        "keys_end": after["keys"],
    }


def summary(samples: list[dict[str, Any]], settled: dict[str, float | None], warmup_minutes: float,
            counts: Counter[str], failures: list[str], redis: dict[str, Any] | None = None) -> dict[str, Any]:
    warm = [s for s in samples if s["t"] >= warmup_minutes * 60] or samples
    redis = redis or {}
    return {
        "samples": len(samples),
        "rss_mb_first": samples[0]["rss_mb"] if samples else None,
        "rss_mb_after_warmup": warm[0]["rss_mb"] if warm else None,
        "rss_mb_end": warm[-1]["rss_mb"] if warm else None,
        "rss_mb_max": max((s["rss_mb"] for s in samples), default=None),
        "rss_slope_mb_per_min": round(slope_per_minute([(s["t"], s["rss_mb"]) for s in warm]), 3),
        "max_gauge_minus_connections": max((abs(s["gauge"] - s["connections"]) for s in samples), default=None),
        "max_gauge_minus_client_sockets": max((abs(s["gauge"] - s["client_sockets"]) for s in samples),
                                              default=None),
        "max_gauge": max((s["gauge"] for s in samples), default=None),
        "live_tables_end": samples[-1]["live_tables"] if samples else None,
        "live_tables_max": max((s["live_tables"] for s in samples), default=None),
        "settled": settled,
        "processes": process_rss(samples, warmup_minutes * 60),
        "redis_bytes_per_finished_hand_after_archive": redis.get("redis_bytes_per_finished_hand_after_archive"),
        "index_entry_bytes_per_table": redis.get("index_entry_bytes_per_table"),
        "redis": redis,
        "counts": dict(sorted(counts.items())),
        "failures": failures,
        "series": samples,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench soak")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--warmup-minutes", type=float, default=None,
                        help="samples before this are warm-up (default: a fifth of the run, at most 2)")
    parser.add_argument("--players", type=int, default=6, help="players at tables of bots")
    parser.add_argument("--spectators", type=int, default=12, help="spectators coming and going")
    parser.add_argument("--readers", type=int, default=2, help="lobby readers")
    parser.add_argument("--hands", type=int, default=2, help="hands a player's table plays")
    parser.add_argument("--sample-s", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--gc-every-s", type=float, default=None,
                        help="the gateway's MIGHTY_GC_EVERY_S (default: the service's; 0: CPython's collections only)")
    parser.add_argument("--trace-s", type=float, default=0.0,
                        help="every process's MIGHTY_DEBUG_TRACEMALLOC_S: log its allocations' growth this often "
                             "(to gateway.log and each worker's log, kept in --logs)")
    parser.add_argument("--logs", default=None, help="keep the service's logs in this directory")
    parser.add_argument("--archive-after-s", type=float, default=10.0,
                        help="MIGHTY_ARCHIVE_AFTER_S: a closed table is archived this long after it closed")
    parser.add_argument("--archive-interval-s", type=float, default=5.0, help="the archive worker's pass interval")
    parser.add_argument("--archive-wait-s", type=float, default=180.0,
                        help="at the end, wait at most this long for the archive worker to take every table")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not (0 < args.minutes <= 240 and 0 <= args.players <= 200 and 0 <= args.spectators <= 500):
        parser.error("--minutes up to 240, --players up to 200, --spectators up to 500")
    if args.warmup_minutes is None:
        args.warmup_minutes = min(2.0, args.minutes / 5)
    os.environ.setdefault("MIGHTY_LOG_LEVEL", "warning")
    from services.logs import configure_logging

    configure_logging()  # to stderr: standard output is the JSON alone
    changes: dict[str, Any] = {"debug_tracemalloc_s": args.trace_s, "archive_after_s": args.archive_after_s}
    if args.gc_every_s is not None:
        changes["gc_every_s"] = args.gc_every_s
    if args.trace_s > 0:
        changes["log_level"] = "info"  # the memory_growth lines
    with tempfile.TemporaryDirectory(prefix="mighty-bench-soak-") as directory, contextlib.ExitStack() as stack:
        root = Path(args.logs) if args.logs else Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        archive_url = archive_url_for_run(stack)
        with service(root, changes, archive_url, args.archive_interval_s) as running:
            result = asyncio.run(drive(running, args))
    print(json.dumps(result if args.json else {k: v for k, v in result.items() if k != "series"}, indent=None))
    return 0 if not result["failures"] else 1


if __name__ == "__main__":
    sys.exit(main())

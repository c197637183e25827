"""`mighty bench load`: tables played by client bots through gateway processes, over real
HTTP and WebSocket sockets on loopback.

A Redis (``REDIS_URL``, else a private redis-server, else the embedded one), a views and
a directory worker and ``--gateways`` gateway processes are started under a fresh
namespace. ``--tables`` mighty-5 tables are created over HTTP by guests (five per table,
each table on one gateway, round robin; a match without end, ``hands: 0``, so that every
table plays until the time is up, with the API's default turn time); each guest holds a WebSocket on its table's
stream and, whenever its pushed view says it is to act, sends a random legal command
over the socket. Latency is from a command sent to the sender's next view pushed back
(the first frame with a newer version). The run stops after ``--seconds`` of play.

The guests run in ``--clients`` processes (the tables dealt round robin; each process
one asyncio loop, uvloop's when it is installed): a thousand sockets are more than one
Python process keeps up with, and the bench must not measure its own limit. Each
process seats its tables, then all start playing together.

Prints one JSON object: commands_per_s, p50_ms, p99_ms, errors (refusals, socket and
HTTP failures), tables, gateways, clients, commands, seconds, and the CPU seconds each
process spent while the tables played (``cpu_s``: the views and directory workers, each
gateway, Redis from ``INFO cpu``: on a cluster every node's, primaries and replicas,
with ``redis_primaries`` and ``redis_replicas`` besides; the client processes together) with the same per
player command in µs (``cpu_us_per_command``), the seconds each was runnable but waited
for a CPU (``run_queue_s``, Linux schedstat: what other work on a shared machine costs
the run) and the machine's 1-minute load average.

``MIGHTY_BENCH_PROFILE=DIR`` runs every service process under cProfile, each writing
``DIR/<name>.prof`` when it stops (the figures are then the profiler's, not the code's).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx
import msgspec
import websockets

from services.cli.gateway import tune_gc
from services.redis_runtime import free_port, redis_url_for_run
from services.store import connect
from services.store.cluster import is_cluster

SEATS = 5


# many players and tables from one address (127.0.0.1): quotas out of the way
TRY_AGAIN_LATER = 1013  # the stream's close code: reconnect (docs/api.md)
RECONNECT_S = (0.25, 5.0)  # the first pause before reconnecting, and the longest
LOOSE_QUOTAS = {"MIGHTY_PLAYERS_PER_ADDRESS": "1000000", "MIGHTY_TABLES_PER_ADDRESS": "1000000",
                "MIGHTY_TABLES_PER_PLAYER": "1000000", "MIGHTY_QUICKPLAYS_PER_ADDRESS": "1000000",
                "MIGHTY_QUICKPLAYS_PER_PLAYER": "1000000", "MIGHTY_SEATS_PER_PLAYER": "1000000",
                "MIGHTY_SOCKETS_PER_ADDRESS": "1000000"}


@dataclass
class Stats:
    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    commands: int = 0
    why: dict[str, int] = field(default_factory=dict)  # errors by refusal code or failure
    elapsed_s: float = 0.0  # of the play
    cpu_s: float = 0.0  # this client process's, during the play
    waited_s: float = 0.0  # runnable but waiting for a CPU, during the play
    # what the guests did as a real client does, by reason: a stream the gateway closed with
    # 1013 (try again later: "too_slow", "unavailable", "busy") opened again after the last version
    # seen; a command refused "unavailable" sent again with the same id
    recovered: dict[str, int] = field(default_factory=dict)

    def error(self, why: str) -> None:
        self.errors += 1
        self.why[why] = self.why.get(why, 0) + 1

    def recover(self, why: str) -> None:
        self.recovered[why] = self.recovered.get(why, 0) + 1

    def add(self, other: Stats) -> None:
        self.latencies_ms += other.latencies_ms
        self.errors += other.errors
        self.commands += other.commands
        for why, n in other.why.items():
            self.why[why] = self.why.get(why, 0) + n
        for why, n in other.recovered.items():
            self.recovered[why] = self.recovered.get(why, 0) + n
        self.elapsed_s = max(self.elapsed_s, other.elapsed_s)
        self.cpu_s += other.cpu_s
        self.waited_s += other.waited_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench load")
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--gateways", type=int, default=2)
    parser.add_argument("--clients", type=int, default=2, help="client processes the guests are spread over")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the tables play")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-deflate", action="store_true",
                        help="guests refuse permessage-deflate (a browser offers it: the default does too)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cluster", action="store_true",
                        help="without REDIS_URL, a local Redis Cluster (3 primaries, 3 replicas)")
    args = parser.parse_args(argv)
    if not (1 <= args.tables <= 2000 and 1 <= args.gateways <= 16 and 1 <= args.clients <= 16
            and 0 < args.seconds <= 600):
        parser.error("--tables 1..2000, --gateways 1..16, --clients 1..16, --seconds up to 600")
    clients = min(args.clients, args.tables)
    with contextlib.ExitStack() as stack:
        url = redis_url_for_run(stack, cluster=args.cluster)
        namespace = f"bench-load-{secrets.token_hex(3)}"
        processes: dict[str, subprocess.Popen[bytes]] = {}
        ports = stack.enter_context(_service(url, namespace, args.gateways, processes))
        cpu = _Cpu(url, processes)
        stats = _run_clients(ports, args.tables, clients, args.seconds, args.seed, not args.no_deflate, cpu)
    ordered = sorted(stats.latencies_ms)
    elapsed = stats.elapsed_s
    result = {
        "commands_per_s": round(stats.commands / elapsed, 1) if elapsed else 0.0,
        "p50_ms": round(statistics.median(ordered), 2) if ordered else None,
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2) if ordered else None,
        "errors": stats.errors,
        "errors_by": stats.why,
        "recovered": stats.recovered,
        "tables": args.tables,
        "gateways": args.gateways,
        "clients": clients,
        "deflate": not args.no_deflate,
        "commands": stats.commands,
        "seconds": round(elapsed, 2),
        # CPU seconds each process spent while the tables played, and per command in µs
        "cpu_s": {name: round(seconds, 2) for name, seconds in cpu.spent.items()},
        "cpu_us_per_command": {name: round(seconds / stats.commands * 1e6) for name, seconds in cpu.spent.items()}
        if stats.commands else {},
        # Redis commands per player command, by name, every process's (INFO commandstats;
        # the INFO calls that measure are among them, a handful in all)
        "redis_calls_per_command": {name: round(count / stats.commands, 3)
                                    for name, count in sorted(cpu.calls.items(), key=lambda kv: -kv[1])}
        if stats.commands else {},
        "redis_calls_per_command_total": round(sum(cpu.calls.values()) / stats.commands, 2) if stats.commands else None,
        # seconds each process was runnable but waited for a CPU (other work on the machine)
        "run_queue_s": {name: round(seconds, 2) for name, seconds in cpu.waited.items()},
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    print(msgspec.json.encode(result).decode() if args.json else msgspec.json.format(msgspec.json.encode(result)).decode())
    return 0


class _Cpu:
    """CPU time of the run's service processes (Linux ``/proc``) and of Redis (``INFO
    cpu``) between ``start`` and ``stop``; the clients report their own (``client``)."""

    def __init__(self, url: str, processes: dict[str, subprocess.Popen[bytes]]) -> None:
        self.url, self.processes = url, processes
        self._at: dict[str, float] = {}
        self._waited_at: dict[str, float] = {}
        self.spent: dict[str, float] = {}
        self.waited: dict[str, float] = {}
        self._calls_at: dict[str, int] = {}
        self.calls: dict[str, int] = {}  # Redis commands run meanwhile, by name (INFO commandstats)

    def _now(self) -> tuple[dict[str, float], dict[str, float]]:
        found: dict[str, float] = {}
        waited: dict[str, float] = {}
        for name, process in self.processes.items():
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
                found[name] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            with contextlib.suppress(OSError, ValueError, IndexError):
                waited[name] = run_queue_s(process.pid)
        with contextlib.suppress(Exception):
            for names, info in _redis_infos(self.url):
                cpu_s = float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
                queued_s = run_queue_s(int(info["process_id"]))  # a Redis on this machine
                for name in names:
                    found[name] = found.get(name, 0.0) + cpu_s
                    waited[name] = waited.get(name, 0.0) + queued_s
        return found, waited

    def _calls(self) -> dict[str, int]:
        """Every Redis command's count so far (all nodes of a cluster, primaries' and
        replicas' alike), by name: ``evalsha``, ``xreadgroup``, ``publish``..."""
        found: dict[str, int] = {}
        with contextlib.suppress(Exception):
            for _, info in _redis_infos(self.url, "commandstats"):
                for name, stat in info.items():
                    command = name.removeprefix("cmdstat_")
                    found[command] = found.get(command, 0) + int(stat["calls"])
        return found

    def start(self) -> None:
        self._at, self._waited_at = self._now()
        self._calls_at = self._calls()

    def stop(self, clients_s: float, clients_waited_s: float) -> None:
        now, waited = self._now()
        calls = self._calls()
        self.calls = {name: count - self._calls_at.get(name, 0) for name, count in calls.items()
                      if count > self._calls_at.get(name, 0)}
        self.spent = {name: now[name] - self._at[name] for name in now if name in self._at}
        self.spent["client"] = clients_s
        self.spent["total"] = _total(self.spent)
        self.waited = {name: waited[name] - self._waited_at[name] for name in waited if name in self._waited_at}
        self.waited["client"] = clients_waited_s
        self.waited["total"] = _total(self.waited)


# A cluster's Redis CPU split by role, besides the whole (``redis``): not added to the total.
_REDIS_ROLES: Final = {"master": "redis_primaries", "slave": "redis_replicas"}


def _total(seconds: dict[str, float]) -> float:
    """Every process's seconds once (a role's share of Redis is in ``redis`` already)."""
    return sum(spent for name, spent in seconds.items() if name not in _REDIS_ROLES.values())


def _redis_infos(url: str, section: str = "default") -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """``INFO`` (its ``section``) of each of the run's redis-servers (one node, or every
    primary and replica of a cluster: the replicas replay the writes), with the figures it
    counts in (by role: the default section only)."""
    client: Any = connect(url, retries=0)
    try:
        if not is_cluster(client):
            return [(("redis",), client.info(section))]
        infos = [client.info(section, target_nodes=node) for node in client.get_nodes()]
        return [(("redis", _REDIS_ROLES.get(str(info.get("role")), "")), info) for info in infos]
    finally:
        client.close()


def run_queue_s(pid: int | str = "self") -> float:
    """Seconds the process's threads have spent runnable but waiting for a CPU (Linux
    ``/proc/PID/schedstat``, second field, of its main thread): what other work on the
    machine costs it."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9


@contextlib.contextmanager
def _service(url: str, namespace: str, gateways: int,
             named: dict[str, subprocess.Popen[bytes]]) -> Iterator[list[int]]:
    env = {**os.environ, "REDIS_URL": url, "MIGHTY_NAMESPACE": namespace, "MIGHTY_LOG_LEVEL": "warning",
           "MIGHTY_LOG_FORMAT": "json", "MIGHTY_RATE_COMMANDS": "1000", "MIGHTY_MAX_LAG_S": "30", **LOOSE_QUOTAS}
    ports = [free_port() for _ in range(gateways)]
    commands = {kind: ["worker", kind] for kind in ("views", "directory")}
    commands |= {f"gateway{n}": ["gateway", "--port", str(port)] for n, port in enumerate(ports)}
    profile = os.environ.get("MIGHTY_BENCH_PROFILE")
    processes: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory(prefix="mighty-load-") as logs:
        try:
            for name, command in commands.items():
                python = [sys.executable]
                if profile:
                    python += ["-m", "cProfile", "-o", str(Path(profile) / f"{name}.prof")]
                with open(Path(logs) / f"{name}.log", "wb") as log:
                    processes.append(subprocess.Popen([*python, "-m", "services.cli", *command],
                                                      stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env))
                named[name] = processes[-1]
            for port in ports:
                _wait_ready(port, processes)
            yield ports
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()


def _wait_ready(port: int, processes: list[subprocess.Popen[bytes]], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in processes):
            raise RuntimeError("a service process exited while starting")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"the gateway on port {port} never became ready")


# ---------------------------------------------------------------- the client processes


def _run_clients(ports: list[int], tables: int, clients: int, seconds: float, seed: int, deflate: bool,
                 cpu: _Cpu) -> Stats:
    """Start ``clients`` processes, each seating its share of the tables; once every one
    has, they play together for ``seconds`` while the services' CPU is measured."""
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(clients + 1)
    results: Any = context.Queue()
    rng = random.Random(seed)
    workers = [context.Process(target=_client, args=(
        [(t, ports[t % len(ports)]) for t in range(n, tables, clients)], seconds, rng.random(), deflate,
        ready, results), daemon=True) for n in range(clients)]
    for worker in workers:
        worker.start()
    try:
        ready.wait(timeout=600)
        cpu.start()
        total = Stats()
        for _ in workers:
            total.add(msgspec.json.decode(results.get(timeout=seconds + 300), type=Stats))
        cpu.stop(total.cpu_s, total.waited_s)
        return total
    finally:
        for worker in workers:
            worker.join(timeout=10)
            if worker.is_alive():
                worker.kill()


def _client(tables: list[tuple[int, int]], seconds: float, seed: float, deflate: bool, ready: Any,
            results: Any) -> None:
    tune_gc()  # as a gateway does: a few hundred sockets each
    stats = _run_loop(_play(tables, seconds, random.Random(seed), deflate, ready))
    results.put(msgspec.json.encode(stats))


def _run_loop(main: Coroutine[Any, Any, Stats]) -> Stats:
    try:
        import uvloop
    except ImportError:  # plain asyncio
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


async def _play(tables: list[tuple[int, int]], seconds: float, rng: random.Random, deflate: bool,
                ready: Any) -> Stats:
    stats = Stats()
    seated: list[tuple[int, str, str, int]] = []  # port, table, token, seat
    for t, port in tables:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            guests = [(await http.post("/api/v1/players", json={"name": f"g{t}-{s}"})).json() for s in range(SEATS)]
            made = await http.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0, "hands": 0},
                                   headers={"Authorization": f"Bearer {guests[0]['token']}"})
            if made.status_code != 201:
                stats.error(f"create {made.status_code}")
                continue
            table = made.json()["table"]
            for seat in range(1, SEATS):
                joined = await http.post(f"/api/v1/tables/{table}/join", json={"seat": seat},
                                         headers={"Authorization": f"Bearer {guests[seat]['token']}"})
                if joined.status_code != 200:
                    stats.error(f"join {joined.status_code}")
            seated += [(port, table, guests[s]["token"], s) for s in range(SEATS)]
    await asyncio.to_thread(ready.wait, 600)
    cpu_at, started, waited_at = time.process_time(), time.perf_counter(), _run_queue_or_zero()
    stop_at = time.monotonic() + seconds
    await asyncio.gather(*(_guest(port, table, token, seat, stats, stop_at, random.Random(rng.random()), deflate)
                           for port, table, token, seat in seated))
    stats.elapsed_s = time.perf_counter() - started
    stats.cpu_s = time.process_time() - cpu_at
    stats.waited_s = _run_queue_or_zero() - waited_at
    return stats


def _run_queue_or_zero() -> float:
    try:
        return run_queue_s()
    except (OSError, ValueError, IndexError):
        return 0.0


class _SeenView(msgspec.Struct):
    """What a guest reads of a pushed view; ``legal`` is decoded only when it acts."""

    to_act: int | None = None
    status: str = ""
    legal: msgspec.Raw = msgspec.Raw(b"[]")


class _Frame(msgspec.Struct):
    type: str
    version: int = 0
    code: str | None = None
    view: _SeenView | None = None


_decode_frame = msgspec.json.Decoder(_Frame).decode
_decode_legal = msgspec.json.Decoder(list[dict[str, Any]]).decode
_encode = msgspec.json.Encoder().encode


async def _guest(port: int, table: str, token: str, seat: int, stats: Stats, stop_at: float,
                 rng: random.Random, deflate: bool) -> None:
    """One seat's player, as a real client plays (docs/api.md, "Playing"): a stream the
    gateway closes with 1013 (try again later) is opened again, after a short pause, from
    the last version seen, after a pause that doubles from 0.25 s up to 5 s while no
    newer view comes (as the web client waits, clients/web/js/api.js); any other failure
    is an error and ends the seat's play."""
    seen = [0]  # the last version seen, kept across the seat's connections
    delay = RECONNECT_S[0]
    while (left := stop_at - time.monotonic()) > 0:
        before = seen[0]
        url = f"ws://127.0.0.1:{port}/api/v1/tables/{table}/stream?after={seen[0]}&token={token}"
        try:
            async with websockets.connect(url, max_size=2**20, open_timeout=30,
                                          compression="deflate" if deflate else None) as ws:
                try:
                    async with asyncio.timeout(left):
                        await _act(ws, seat, stats, rng, seen)  # one timer for the play, not one a frame
                        return  # the table closed
                except TimeoutError:
                    return
        except websockets.ConnectionClosed as closed:
            if closed.rcvd is None or closed.rcvd.code != TRY_AGAIN_LATER:
                stats.error(type(closed).__name__)
                return
            stats.recover(f"reopened after {closed.rcvd.reason or closed.rcvd.code}")
            delay = RECONNECT_S[0] if seen[0] > before else min(delay * 2, RECONNECT_S[1])
            await asyncio.sleep(rng.uniform(delay / 2, delay))
        except (OSError, websockets.WebSocketException) as failure:
            stats.error(type(failure).__name__)
            return


async def _act(ws: Any, seat: int, stats: Stats, rng: random.Random, seen: list[int]) -> None:
    pending: tuple[float, int] | None = None  # sent at, the version acted on
    sent: bytes = b""
    while True:
        frame = _decode_frame(await ws.recv(decode=False))
        if frame.type == "refused":
            if frame.code == "unavailable" and pending is not None:  # sent again with the same id
                stats.recover("command sent again after unavailable")
                await asyncio.sleep(rng.uniform(0.05, 0.5))
                await ws.send(sent, text=True)
                continue
            stats.error(frame.code or "refused")
            pending = None
            continue
        view = frame.view
        if frame.type != "view" or view is None:
            continue
        seen[0] = max(seen[0], frame.version)
        if pending is not None and frame.version > pending[1]:
            stats.latencies_ms.append((time.perf_counter() - pending[0]) * 1000)
            stats.commands += 1
            pending = None
        if view.status == "closed":
            return
        if pending is None and view.to_act == seat and (legal := _decode_legal(view.legal)):
            command = _choose(legal, rng)
            pending = (time.perf_counter(), frame.version)
            sent = _encode({"type": "command", "id": f"c{frame.version}", "command": command})
            await ws.send(sent, text=True)


def _choose(legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    command = dict(rng.choice(legal))
    if command["type"] == "discard" and "count" in command:
        return {"type": "discard", "cards": rng.sample(command["from"], command["count"])}
    return command


if __name__ == "__main__":
    raise SystemExit(main())

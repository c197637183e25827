"""`mighty bench load`: tables played by client bots through gateway processes, over real
HTTP and WebSocket sockets on loopback.

A Redis (``REDIS_URL``, else a private redis-server, else the embedded one), a views and
a directory worker and ``--gateways`` gateway processes are started under a fresh
namespace. ``--tables`` mighty-5 tables are created over HTTP by guests (five per table,
each table on one gateway, round robin); each guest holds a WebSocket on its table's
stream and, whenever its pushed view says it is to act, sends a random legal command
over the socket. Latency is from a command sent to the sender's next view pushed back
(the first frame with a newer version). The run stops after ``--seconds`` of play.

Prints one JSON object: commands_per_s, p50_ms, p99_ms, errors (refusals, socket and
HTTP failures), tables, gateways, commands, seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websockets

from services.redis_runtime import free_port, redis_url_for_run

SEATS = 5


@dataclass
class Stats:
    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    commands: int = 0
    why: dict[str, int] = field(default_factory=dict)  # errors by refusal code or failure

    def error(self, why: str) -> None:
        self.errors += 1
        self.why[why] = self.why.get(why, 0) + 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench load")
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--gateways", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the tables play")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cluster", action="store_true",
                        help="without REDIS_URL, a local Redis Cluster (3 primaries, 3 replicas)")
    args = parser.parse_args(argv)
    if not (1 <= args.tables <= 1000 and 1 <= args.gateways <= 16 and 0 < args.seconds <= 600):
        parser.error("--tables 1..1000, --gateways 1..16, --seconds up to 600")
    with contextlib.ExitStack() as stack:
        url = redis_url_for_run(stack, cluster=args.cluster)
        namespace = f"bench-load-{secrets.token_hex(3)}"
        ports = stack.enter_context(_service(url, namespace, args.gateways))
        stats, tables, elapsed = asyncio.run(_play(ports, args.tables, args.seconds, random.Random(args.seed)))
    ordered = sorted(stats.latencies_ms)
    result = {
        "commands_per_s": round(stats.commands / elapsed, 1) if elapsed else 0.0,
        "p50_ms": round(statistics.median(ordered), 2) if ordered else None,
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2) if ordered else None,
        "errors": stats.errors,
        "errors_by": stats.why,
        "tables": tables,
        "gateways": args.gateways,
        "commands": stats.commands,
        "seconds": round(elapsed, 2),
    }
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    return 0


@contextlib.contextmanager
def _service(url: str, namespace: str, gateways: int) -> Iterator[list[int]]:
    env = {**os.environ, "REDIS_URL": url, "MIGHTY_NAMESPACE": namespace, "MIGHTY_LOG_LEVEL": "warning",
           "MIGHTY_LOG_FORMAT": "json", "MIGHTY_RATE_COMMANDS": "1000", "MIGHTY_MAX_LAG_S": "30"}
    mighty = [sys.executable, "-m", "services.cli"]
    ports = [free_port() for _ in range(gateways)]
    argvs = [[*mighty, "worker", kind] for kind in ("views", "directory")]
    argvs += [[*mighty, "gateway", "--port", str(port)] for port in ports]
    processes: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory(prefix="mighty-load-") as logs:
        try:
            for n, argv in enumerate(argvs):
                with open(Path(logs) / f"{n}.log", "wb") as log:
                    processes.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env))
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


async def _play(ports: list[int], tables: int, seconds: float, rng: random.Random) -> tuple[Stats, int, float]:
    stats = Stats()
    seated: list[tuple[int, str, str, int]] = []  # port, table, token, seat
    for t in range(tables):
        port = ports[t % len(ports)]
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            guests = [(await http.post("/api/v1/players", json={"name": f"g{t}-{s}"})).json() for s in range(SEATS)]
            made = await http.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0},
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
    started = time.perf_counter()
    stop_at = time.monotonic() + seconds
    await asyncio.gather(*(_guest(port, table, token, seat, stats, stop_at, random.Random(rng.random()))
                           for port, table, token, seat in seated))
    return stats, tables, time.perf_counter() - started


async def _guest(port: int, table: str, token: str, seat: int, stats: Stats, stop_at: float,
                 rng: random.Random) -> None:
    url = f"ws://127.0.0.1:{port}/api/v1/tables/{table}/stream?after=0&token={token}"
    pending: tuple[float, int] | None = None  # sent at, the version acted on
    try:
        async with websockets.connect(url, max_size=2**20, open_timeout=30) as ws:
            while (left := stop_at - time.monotonic()) > 0:
                try:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=left))
                except TimeoutError:
                    return
                if frame["type"] == "refused":
                    stats.error(frame.get("code", "refused"))
                    pending = None
                    continue
                if frame["type"] != "view":
                    continue
                view = frame["view"]
                if pending is not None and frame["version"] > pending[1]:
                    stats.latencies_ms.append((time.perf_counter() - pending[0]) * 1000)
                    stats.commands += 1
                    pending = None
                if view.get("status") == "closed":
                    return
                if pending is None and view.get("to_act") == seat and view.get("legal"):
                    command = _choose(view["legal"], rng)
                    pending = (time.perf_counter(), frame["version"])
                    await ws.send(json.dumps({"type": "command", "id": f"c{frame['version']}", "command": command}))
    except (OSError, websockets.WebSocketException) as failure:
        stats.error(type(failure).__name__)


def _choose(legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    command = dict(rng.choice(legal))
    if command["type"] == "discard" and "count" in command:
        return {"type": "discard", "cards": rng.sample(command["from"], command["count"])}
    return command


if __name__ == "__main__":
    raise SystemExit(main())

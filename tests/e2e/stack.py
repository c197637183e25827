"""The whole service as a browser meets it: a private redis-server, the three projection
workers and ``mighty gateway`` (uvicorn, serving the web client at ``/``).

``python -m tests.e2e.stack [SECONDS]`` runs it by hand for a while (default 600 s) and
prints the address, for looking at the client while working on it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import httpx

from services.redis_runtime import free_port, start_private_redis
from services.store import connect
from services.store.keys import KeySpace
from tests.integration.workers.support import wait_for, wait_ready, workers

# many players and tables from one address (127.0.0.1): quotas out of the way
LOOSE_QUOTAS = {"MIGHTY_PLAYERS_PER_ADDRESS": "1000000", "MIGHTY_TABLES_PER_ADDRESS": "1000000",
                "MIGHTY_TABLES_PER_PLAYER": "1000000", "MIGHTY_QUICKPLAYS_PER_ADDRESS": "1000000",
                "MIGHTY_QUICKPLAYS_PER_PLAYER": "1000000", "MIGHTY_SEATS_PER_PLAYER": "1000000"}


@contextmanager
def played_by_bots(url: str, directory: Path) -> Iterator[None]:
    """The bot worker and the timer worker (``mighty worker bots``, ``timers``) as
    processes: bots play their seats, a turn whose time runs out is played."""
    env = {**os.environ, "MIGHTY_LOG_FORMAT": "json", "MIGHTY_LOG_LEVEL": "warning", "REDIS_URL": url}
    started = []
    for kind in ("bots", "timers"):
        with open(directory / f"{kind}.log", "ab") as log:
            started.append(subprocess.Popen([sys.executable, "-m", "services.cli", "worker", kind],
                                            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env))
    try:
        yield
    finally:
        for process in started:
            process.terminate()
        for process in started:
            process.wait(timeout=15)


@contextmanager
def running_stack(directory: Path, *, bots: bool = False) -> Iterator[str]:
    """Yield the gateway's base URL; everything is stopped afterwards. ``bots``: the bot
    and timer workers run too (tables with bots in their seats play on)."""
    server = start_private_redis(directory / "redis", appendonly=True, appendfsync="everysec")
    client = connect(server.url)
    logs = open(directory / "gateway.log", "ab")  # noqa: SIM115 - handed to the child
    try:
        with workers(server.url), (played_by_bots(server.url, directory) if bots else nullcontext()):
            wait_ready(client, KeySpace(), ("views", "ledger", "directory"))
            port = free_port()
            env = {**os.environ, "MIGHTY_LOG_FORMAT": "json", "MIGHTY_LOG_LEVEL": "warning",
                   "MIGHTY_RATE_COMMANDS": "100000", "REDIS_URL": server.url, **LOOSE_QUOTAS,
                   "MIGHTY_RATINGS_MIN_HANDS": "1"}  # a leaderboard after one hand (docs/ratings.md)
            process = subprocess.Popen(
                [sys.executable, "-m", "services.cli", "gateway", "--port", str(port)],
                stdin=subprocess.DEVNULL, stdout=logs, stderr=logs, env=env)
            base = f"http://127.0.0.1:{port}"
            try:
                def up() -> bool:
                    assert process.poll() is None, (directory / "gateway.log").read_text()[-2000:]
                    try:
                        return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
                    except httpx.TransportError:
                        return False

                wait_for(up, 30, "the gateway to answer")
                yield base
            finally:
                process.terminate()
                process.wait(timeout=15)
    finally:
        logs.close()
        client.close()
        server.stop()


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 600.0
    # a SIGTERM unwinds the context managers, so the children stop with it
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with tempfile.TemporaryDirectory() as tmp, running_stack(Path(tmp)) as url:
        print(url, flush=True)
        time.sleep(seconds)

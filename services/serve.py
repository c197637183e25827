"""``mighty serve``: the whole service on one machine, each part its own process.

The gateway (HTTP, WebSocket, the web client) and every worker: the projection workers
(views, ledger, directory), the bot and timer workers, and the archive worker when an archive URL is
set. They run on the Redis ``mighty demo`` would use (``bootstrap.run_redis``:
``REDIS_URL``, else a private redis-server, else the embedded fake one), given to each
child through the environment (``Settings.as_env``). ``run_serve`` starts them, waits for
the gateway's ``/readyz``, says where to point a browser, then keeps every child running
(``services/supervisor.py``: a child that exits is started again, with backoff; the
gateway is never stopped for a worker) until SIGINT, SIGTERM or SIGHUP (a closed
terminal), which stop the service in order: the gateway first, then the workers (SIGTERM,
then SIGKILL for one that does not stop within ``STOP_S``), then the Redis it started.

Every child, and the redis-server it starts, runs in a session of its own
(``services/sessions.py``): a Ctrl-C at the terminal reaches ``mighty serve`` alone, not
every process at once (Redis would stop before the workers writing to it). On Linux a
child is also sent SIGTERM when ``mighty serve`` dies without stopping it (SIGKILL): it
stops as it would on any SIGTERM (docs/operations.md, "Stopping").
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Final

import structlog

from projections import KINDS
from services.bootstrap import run_redis
from services.sessions import own_session
from services.settings import Settings
from services.supervisor import STOP_S, Backoff, Part, Supervisor

__all__ = ["STOP_S", "Part", "parts", "run_serve", "url_of"]

log = structlog.get_logger("mighty.serve")

READY_S: Final = 60.0


def parts(settings: Settings) -> list[Part]:
    """The processes of the service on ``settings``."""
    mighty = [sys.executable, "-m", "services.cli"]
    found = [Part(kind, [*mighty, "worker", kind]) for kind in KINDS]
    found.append(Part("bots", [*mighty, "worker", "bots"]))
    found.append(Part("timers", [*mighty, "worker", "timers"]))
    if settings.archive_url:
        found.append(Part("archive", [*mighty, "worker", "archive"]))
    found.append(Part("gateway", [*mighty, "gateway", "--host", settings.host, "--port", str(settings.port)],
                      wave=0))  # stopped first: no command taken once the workers stop
    return found


def url_of(settings: Settings) -> str:
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    return f"http://{host}:{settings.port}/"


def run_serve(settings: Settings, say: Callable[[str], None], *, cluster: bool = False,
              backoff: Backoff | None = None) -> int:
    """Run the service until SIGINT, SIGTERM or SIGHUP; 0 when stopped so, 1 when it could not
    start (a part that keeps failing before the service is ready, or no ``/readyz`` within
    ``READY_S``). A part that exits is started again (``services/supervisor.py``).
    ``cluster``: without ``REDIS_URL``, on a local Redis Cluster rather than one redis-server."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    with contextlib.ExitStack() as stack:  # closed in reverse: the parts, then the Redis
        settings, redis_ = run_redis(settings, stack, cluster=cluster, own_session=True)
        say(f"store: {redis_.kind} Redis at {redis_.url} (namespace {settings.namespace})")
        supervisor = Supervisor(parts(settings), _spawner(settings), backoff or Backoff())
        stack.callback(supervisor.stop_all)
        supervisor.start()
        url = url_of(settings)
        ready_by = time.monotonic() + READY_S
        while not stop.wait(0.2):
            failed = supervisor.tend()
            if failed is not None:
                log.error("part_failed_to_start", part=failed.part.name, code=failed.last_code,
                          tries=failed.failures)
                say(f"the {failed.part.name} process exited {failed.failures} times in a row as it started "
                    f"(last exit code {failed.last_code}): stopping (its log lines above say why)")
                return 1
            if not supervisor.ready:
                if _answers_ready(url):
                    supervisor.ready = True
                    say(f"open {url} in a browser (Ctrl-C stops the service)")
                elif time.monotonic() > ready_by:
                    log.error("gateway_not_ready", url=url, waited_s=READY_S)
                    return 1
        restarted = ", ".join(f"{name} {count}" for name, count in supervisor.restarts().items())
        say(f"stopping (parts restarted: {restarted})" if restarted else "stopping")
    say("stopped")
    return 0


def _spawner(settings: Settings) -> Callable[[list[str]], subprocess.Popen[bytes]]:
    env = {**os.environ, **settings.as_env()}

    def spawn(argv: list[str]) -> subprocess.Popen[bytes]:
        # stdin closed; output shared with the terminal (each line is a log record, written
        # whole: services/logs.py); a session of its own, stopped by serve alone
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, env=env, **own_session())

    return spawn


def _answers_ready(url: str) -> bool:
    """The gateway's ``/readyz`` answers 200."""
    try:
        with urllib.request.urlopen(url + "readyz", timeout=2) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError):
        return False

"""``mighty serve``: the whole service on one machine, each part its own process.

The gateway (HTTP, WebSocket, the web client) and every worker: the projection workers
(views, ledger, directory), the bot and timer workers, and the archive worker when an archive URL is
set. They run on the Redis ``mighty demo`` would use (``bootstrap.run_redis``:
``REDIS_URL``, else a private redis-server, else the embedded fake one), given to each
child through the environment (``Settings.as_env``). ``run_serve`` starts them, waits for
the gateway's ``/readyz``, says where to point a browser, then waits for SIGINT or
SIGTERM (or a child that stops by itself) and stops every child: SIGTERM, then SIGKILL
for one that does not stop within ``STOP_S``.
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

import structlog

from projections import KINDS
from services.bootstrap import run_redis
from services.settings import Settings

log = structlog.get_logger("mighty.serve")

STOP_S: Final = 10.0
READY_S: Final = 60.0


@dataclass(frozen=True)
class Part:
    name: str
    argv: list[str]


def parts(settings: Settings) -> list[Part]:
    """The processes of the service on ``settings``."""
    mighty = [sys.executable, "-m", "services.cli"]
    found = [Part(kind, [*mighty, "worker", kind]) for kind in KINDS]
    found.append(Part("bots", [*mighty, "worker", "bots"]))
    found.append(Part("timers", [*mighty, "worker", "timers"]))
    if settings.archive_url:
        found.append(Part("archive", [*mighty, "worker", "archive"]))
    found.append(Part("gateway", [*mighty, "gateway", "--host", settings.host, "--port", str(settings.port)]))
    return found


def url_of(settings: Settings) -> str:
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    return f"http://{host}:{settings.port}/"


def run_serve(settings: Settings, say: Callable[[str], None], *, cluster: bool = False) -> int:
    """Run the service until SIGINT or SIGTERM; 0 when stopped so, 1 when a part failed.
    ``cluster``: without ``REDIS_URL``, on a local Redis Cluster rather than one redis-server."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with contextlib.ExitStack() as stack:
        settings, redis_ = run_redis(settings, stack, cluster=cluster)
        say(f"store: {redis_.kind} Redis at {redis_.url} (namespace {settings.namespace})")
        children = stack.enter_context(_started(settings))
        url = url_of(settings)
        if not _ready(url, children, stop):
            return 0 if stop.is_set() else 1
        say(f"open {url} in a browser (Ctrl-C stops the service)")
        while not stop.wait(0.5):
            failed = _exited(children)
            if failed is not None:
                log.error("part_exited", part=failed[0].name, code=failed[1].returncode)
                say(f"the {failed[0].name} process exited with {failed[1].returncode}: stopping")
                return 1
        say("stopping")
    return 0


@contextlib.contextmanager
def _started(settings: Settings) -> Iterator[list[tuple[Part, subprocess.Popen[bytes]]]]:
    env = {**os.environ, **settings.as_env()}
    children: list[tuple[Part, subprocess.Popen[bytes]]] = []
    try:
        for part in parts(settings):
            # stdin closed; output shared with the terminal (each line is a log record)
            children.append((part, subprocess.Popen(part.argv, stdin=subprocess.DEVNULL, env=env)))
            log.info("part_started", part=part.name, pid=children[-1][1].pid)
        yield children
    finally:
        _stop_all(children)


def _stop_all(children: list[tuple[Part, subprocess.Popen[bytes]]]) -> None:
    for _, process in reversed(children):  # the gateway first: no command after the workers
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + STOP_S
    for part, process in children:
        try:
            process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            log.warning("part_killed", part=part.name, pid=process.pid)
            process.kill()
            process.wait()


def _exited(children: list[tuple[Part, subprocess.Popen[bytes]]]) -> tuple[Part, subprocess.Popen[bytes]] | None:
    for part, process in children:
        if process.poll() is not None:
            return part, process
    return None


def _ready(url: str, children: list[tuple[Part, subprocess.Popen[bytes]]], stop: threading.Event) -> bool:
    """Wait for the gateway's ``/readyz`` to answer 200; False if stopped or a part died."""
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline and not stop.is_set():
        if _exited(children) is not None:
            failed = _exited(children)
            assert failed is not None
            log.error("part_exited", part=failed[0].name, code=failed[1].returncode)
            return False
        try:
            with urllib.request.urlopen(url + "readyz", timeout=2) as answer:
                if answer.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        stop.wait(0.2)
    if not stop.is_set():
        log.error("gateway_not_ready", url=url, waited_s=READY_S)
    return False

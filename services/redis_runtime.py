"""A Redis for one run: REDIS_URL, else a private redis-server, else an embedded fake.

``start_private_redis`` launches ``redis-server`` from the PATH on a free port of
127.0.0.1 in a directory of the caller's, with deploy/redis.conf's guarantees (AOF on
as asked, no RDB snapshots, ``maxmemory-policy noeviction``, 2 KB stream nodes). It never touches the
machine's shared Redis.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import redis
import structlog

from services import sessions
from services.settings import settings_from

log = structlog.get_logger("mighty.redis")

FSYNC_POLICIES: Final = ("always", "everysec", "no")
# The durability setting (docs/store.md, "Durability"): everysec (deploy/redis.conf) can
# lose the last second of acknowledged appends to an OS crash; always
# (deploy/redis-always.conf) loses none, at an fsync per event-loop turn.
DURABILITY_PROFILES: Final = ("everysec", "always")
DEFAULT_DURABILITY: Final = "everysec"
# deploy/redis.conf's stream node size: a node is allocated whole when it is begun, so a
# live table's stream costs this, not Redis's 4 KB (docs/capacity.md)
STREAM_NODE_MAX_BYTES: Final = 2048


def profile_config(durability: str) -> Path:
    """The deploy profile of a durability setting: deploy/redis.conf or redis-always.conf."""
    if durability not in DURABILITY_PROFILES:
        raise ValueError(f"durability is one of {', '.join(DURABILITY_PROFILES)}, not {durability!r}")
    name = "redis.conf" if durability == "everysec" else "redis-always.conf"
    return Path(__file__).resolve().parent.parent / "deploy" / name
_START_TIMEOUT_S: Final = 15.0


class RedisStartError(RuntimeError):
    """redis-server did not come up (missing binary, bad config, port taken)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrivateRedis:
    """One redis-server process owned by this program, restartable on the same AOF."""

    def __init__(
        self,
        dir: Path,
        *,
        appendonly: bool,
        appendfsync: str,
        port: int,
        extra_args: Sequence[str] = (),
        config_file: Path | None = None,
        own_session: bool = False,
    ) -> None:
        if appendfsync not in FSYNC_POLICIES:
            raise ValueError(f"appendfsync is one of {FSYNC_POLICIES}, not {appendfsync!r}")
        self.dir = dir
        self.port = port
        self.appendonly = appendonly
        self.appendfsync = appendfsync
        self.extra_args = tuple(extra_args)
        self.config_file = config_file
        # in a session of its own (services/sessions.py): a Ctrl-C at the terminal reaches
        # only the program that started it, which stops it last (mighty serve)
        self.own_session = own_session
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def argv(self) -> list[str]:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RedisStartError("redis-server is not on the PATH")
        config = [] if self.config_file is None else [str(self.config_file)]
        return [
            binary,
            *config,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.dir),
            "--daemonize", "no",
            "--save", "",
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", self.appendfsync,
            "--maxmemory-policy", "noeviction",
            "--stream-node-max-bytes", str(STREAM_NODE_MAX_BYTES),
            "--logfile", str(self.dir / "redis.log"),
            *self.extra_args,
        ]  # fmt: skip

    def start(self) -> None:
        if self.running():
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        self._process = subprocess.Popen(
            self.argv(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            **(sessions.own_session() if self.own_session else {}),
        )
        self._wait_until_ready()
        log.debug("redis started", port=self.port, dir=str(self.dir), fsync=self.appendfsync)

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def loading(self) -> bool:
        """Whether the server listens and is still loading its data (LOADING)."""
        client = redis.Redis(host="127.0.0.1", port=self.port, protocol=2, socket_timeout=5)
        try:
            return bool(client.info("persistence")["loading"])
        except redis.exceptions.BusyLoadingError:
            return True
        except redis.ConnectionError:
            return False
        finally:
            client.close()

    def _wait_until_ready(self) -> None:
        client = redis.Redis(host="127.0.0.1", port=self.port, protocol=2, socket_timeout=1.0)
        deadline = time.monotonic() + _START_TIMEOUT_S
        try:
            while time.monotonic() < deadline:
                if not self.running():
                    raise RedisStartError(f"redis-server exited: {self.log_tail()}")
                with contextlib.suppress(redis.ConnectionError, redis.TimeoutError):
                    if client.ping():
                        return
                time.sleep(0.02)
        finally:
            client.close()
        self.kill()
        raise RedisStartError(f"redis-server did not answer PING: {self.log_tail()}")

    def log_tail(self, lines: int = 20) -> str:
        path = self.dir / "redis.log"
        if not path.exists():
            return "(no log)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` and wait for the process to end (SIGKILL: a crash, no goodbye)."""
        if self._process is None:
            return
        if self._process.poll() is None:
            self._process.send_signal(sig)
            self._process.wait(timeout=_START_TIMEOUT_S)

    def stop(self) -> None:
        """A clean shutdown: SIGTERM makes Redis flush and fsync the AOF first (a server
        left stopped, SIGSTOP, is continued first: stopped, it would not take it)."""
        if self._process is None:
            return
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGCONT)
        try:
            self.kill(signal.SIGTERM)
        except subprocess.TimeoutExpired:
            self.kill(signal.SIGKILL)
        self._process = None

    def restart(self) -> None:
        """Stop (if running) and start again on the same dir, port and AOF."""
        self.stop()
        self.start()


def start_private_redis(
    dir: Path,
    *,
    appendonly: bool = True,
    appendfsync: str | None = None,
    port: int | None = None,
    extra_args: Sequence[str] = (),
    config_file: Path | None = None,
    durability: str | None = None,
    own_session: bool = False,
) -> PrivateRedis:
    """Start redis-server in ``dir``; on a port race (free port taken meanwhile), try again.

    ``durability`` (``everysec`` | ``always``, default everysec; processes pass ``Settings.durability``)
    sets ``appendfsync``; an explicit ``appendfsync`` (``no`` included) wins over it.

    ``config_file`` (deploy/redis.conf) is read first; the arguments here override its
    port, address, dir, AOF and fsync settings. ``extra_args`` go last on redis-server's
    command line (``--cluster-enabled yes``). ``own_session``: redis-server in a session
    of its own (``PrivateRedis``), stopped by this program alone.
    """
    if appendfsync is None:
        appendfsync = DEFAULT_DURABILITY if durability is None else durability
        if appendfsync not in DURABILITY_PROFILES:
            raise ValueError(f"durability is one of {', '.join(DURABILITY_PROFILES)}, not {appendfsync!r}")
    attempts = 1 if port is not None else 5
    for attempt in range(attempts):
        server = PrivateRedis(
            dir,
            appendonly=appendonly,
            appendfsync=appendfsync,
            port=port or free_port(),
            extra_args=extra_args,
            config_file=config_file,
            own_session=own_session,
        )
        try:
            server.start()
            return server
        except RedisStartError:
            server.stop()
            if attempt + 1 == attempts:
                raise
    raise AssertionError("unreachable")


def start_embedded_redis(stack: contextlib.ExitStack) -> str:
    """An in-process Redis (fakeredis's TCP server, Lua included) on a free port."""
    from fakeredis import TcpFakeServer

    server = TcpFakeServer(("127.0.0.1", 0), server_type="redis")
    thread = threading.Thread(target=server.serve_forever, name="fakeredis", daemon=True)
    thread.start()
    stack.callback(server.server_close)
    stack.callback(server.shutdown)
    host, port = server.server_address[:2]
    return f"redis://{host!s}:{port}/0"


RedisKind = Literal["given", "private", "cluster", "embedded"]


@dataclass(frozen=True)
class RunRedis:
    """The Redis a run uses: ``given`` (a URL it was told), ``private`` (a redis-server it
    started, gone when it ends), ``cluster`` (a local cluster of six redis-servers it
    started, services/redis_cluster.py) or ``embedded`` (fakeredis in the process, no
    durability)."""

    url: str
    kind: RedisKind


def redis_for_run(stack: contextlib.ExitStack, url: str | None = None,
                  appendfsync: str = "everysec", cluster: bool = False, own_session: bool = False) -> RunRedis:
    """``url`` when given; else a private redis-server (fsync ``appendfsync``), or with
    ``cluster`` a local cluster (three primaries, three replicas); else an embedded fake
    Redis. Whatever is started is stopped (and its temp dir removed) when ``stack``
    closes. ``own_session``: each redis-server started in a session of its own
    (services/sessions.py), so that a Ctrl-C reaches only this program, which stops it
    when ``stack`` closes (``mighty serve``: after the processes that use it)."""
    if url:
        return RunRedis(url, "given")
    if cluster:
        if not shutil.which("redis-server") or not shutil.which("redis-cli"):
            raise RedisStartError("a local cluster needs redis-server and redis-cli on the PATH")
        from services.redis_cluster import start_local_cluster

        dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mighty-cluster-")))
        local = start_local_cluster(dir, appendfsync=appendfsync, own_session=own_session)
        stack.callback(local.stop)
        return RunRedis(local.url, "cluster")
    if shutil.which("redis-server"):
        dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mighty-redis-")))
        server = start_private_redis(dir, appendfsync=appendfsync, own_session=own_session)
        stack.callback(server.stop)
        return RunRedis(server.url, "private")
    log.warning("redis-server not found: using the embedded fake Redis (no durability)")
    return RunRedis(start_embedded_redis(stack), "embedded")


def redis_url_for_run(stack: contextlib.ExitStack, cluster: bool = False) -> str:
    """``REDIS_URL`` when set; else a private redis-server (``cluster``: a local cluster);
    else an embedded fake Redis (``redis_for_run``; the benchmarks use this)."""
    return redis_for_run(stack, settings_from().redis_url, cluster=cluster).url

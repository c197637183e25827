"""Drill 7: Redis up but refusing for a while: loading its data after a restart (LOADING),
or unable to persist (MISCONF). Every answer meanwhile that needs the store is the
retryable ``unavailable`` (503; a socket command's ``refused`` frame with that code), for
commands over HTTP and over the socket, for the lobby and the views, never a 500 or
``store_corrupt`` (a read that Redis still serves is answered, and a command refused
before any write, as the prober's at a seat not its own, gets its refusal); no part
crashes; play resumes once Redis serves again and nothing acknowledged is lost."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from services.redis_runtime import PrivateRedis, profile_config, start_private_redis
from tests.drills.outage import Outage, run_outage_drill
from tests.drills.service import Service

pytestmark = pytest.mark.timeout(180)

FILLER_KEYS = 10_000  # loaded at ~0.1-0.2 ms a key (key-load-delay): one to a few seconds
MISCONF_S = 2.0


@pytest.fixture
def refusing_redis(tmp_path: Path) -> Any:
    """A redis-server on the everysec profile whose ``dir`` may be changed at run time
    (``enable-protected-configs local``: what the MISCONF drill does to fail a save)."""
    started: list[PrivateRedis] = []

    def start() -> PrivateRedis:
        server = start_private_redis(tmp_path / "redis", durability="everysec",
                                     config_file=profile_config("everysec"),
                                     extra_args=("--enable-protected-configs", "local"))
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def _client(server: PrivateRedis) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=server.port, protocol=2, socket_timeout=5)


def _fill(server: PrivateRedis) -> None:
    """Put ``FILLER_KEYS`` keys (another namespace) into the AOF's base file, so that a
    restart with ``key-load-delay`` spends a while loading them."""
    client = _client(server)
    try:
        pipe = client.pipeline(transaction=False)
        for n in range(FILLER_KEYS):
            pipe.set(f"filler:{n}", "x")
        pipe.execute()
        client.bgrewriteaof()
        deadline = time.monotonic() + 30
        while client.info("persistence")["aof_rewrite_in_progress"] or \
                client.info("persistence")["aof_rewrite_scheduled"]:
            assert time.monotonic() < deadline, "the AOF rewrite never ended"
            time.sleep(0.05)
    finally:
        client.close()


def test_redis_loading_its_data_answers_unavailable_only_and_play_resumes(
    tmp_path: Path, refusing_redis: Any, figures: Any,
) -> None:
    server = refusing_redis()
    loaded_s: list[float] = []

    async def outage(drill: Outage) -> None:
        await asyncio.to_thread(server.kill, signal.SIGTERM)  # SHUTDOWN: the AOF is whole
        server.extra_args = (*server.extra_args, "--key-load-delay", "100",
                             "--loading-process-events-interval-bytes", "1024")
        drill.began()
        starting = asyncio.create_task(asyncio.to_thread(server.start))  # returns once loaded
        while not server.loading():  # until it listens, and loads
            assert not starting.done(), "redis loaded before the drill saw it loading"
            await asyncio.sleep(0.01)
        loading_at = time.monotonic()
        await drill.probe_during(starting)
        loaded_s.append(time.monotonic() - loading_at)
        drill.ended()

    def before(_: Service) -> None:
        _fill(server)

    # a call that waited (the client's retries) until the data was in is answered as usual:
    # a view or the lobby 200, a player made 201, the prober's command (it holds no seat)
    # 403 not_your_seat, as the cluster drills' probes once the store is up
    found = run_outage_drill(tmp_path, server.url, outage, probe_lobby=True, before=before,
                             answers_up=frozenset({"200 ok", "201 ok", "403 not_your_seat"}))
    figures(loading_s=round(loaded_s[0], 3), **found.figures())
    assert "503 unavailable" in found.outage.probes, found.outage.probes
    assert found.lost == 0


def test_redis_refusing_writes_misconf_answers_unavailable_only_and_play_resumes(
    tmp_path: Path, refusing_redis: Any, figures: Any,
) -> None:
    server = refusing_redis()

    async def outage(drill: Outage) -> None:
        def refuse_writes() -> None:
            # A background save that cannot be written (no file can be made in /proc),
            # with save points on: Redis refuses every write with MISCONF, as it does
            # when its disk is full (stop-writes-on-bgsave-error, the default).
            client = _client(server)
            try:
                client.config_set("dir", "/proc")
                client.config_set("save", "3600 1")
                client.bgsave()
                deadline = time.monotonic() + 10
                while client.info("persistence")["rdb_last_bgsave_status"] != "err":
                    assert time.monotonic() < deadline, "the failing save never failed"
                    time.sleep(0.02)
            finally:
                client.close()

        def accept_writes() -> None:
            client = _client(server)
            try:
                client.config_set("save", "")
                client.config_set("dir", str(server.dir))
            finally:
                client.close()

        await asyncio.to_thread(refuse_writes)
        drill.began()
        await drill.probe_for(MISCONF_S)
        await asyncio.to_thread(accept_writes)
        drill.ended()

    # reads are served meanwhile (a view, the lobby): 200; a write is 503 unavailable. The
    # prober's command (it holds no seat) writes nothing: its admission is the gateway's own
    # (services/gateway/command_rate.py), so it is refused 403 not_your_seat as with Redis
    # up; the players' commands, which append, meet 503 (their refusals checked below)
    found = run_outage_drill(tmp_path, server.url, outage, probe_lobby=True,
                             answers_up=frozenset({"200 ok", "403 not_your_seat"}))
    figures(**found.figures())
    assert "503 unavailable" in found.outage.probes, found.outage.probes
    assert found.lost == 0

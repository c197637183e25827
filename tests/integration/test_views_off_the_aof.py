"""The views and the directory are caches of the table streams: their workers write them,
with their checkpoints, to the replicas but not to the AOF (docs/workers.md, "Kept off
the AOF"). A Redis restarted on its AOF has them as of its last rewrite, or not at all,
and the workers bring them back to what they were, from the feed or the table streams."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from bench.aof import aof_commands, incr_files
from projections import KINDS
from services.projection.keys import ProjectionKeys
from services.projection.read import wait_until
from services.store.keys import KeySpace
from services.store.redis_store import connect
from tests.integration.workers.support import (
    Tables,
    assert_identical_to_a_rebuild,
    start_worker,
    store_of,
    workers,
)

pytestmark = pytest.mark.integration
SPACE = KeySpace(16)  # the workers' default partition count


def _written_keys(data_dir: Path, offsets: dict[Path, int]) -> list[str]:
    """The first key of each command the AOF's incremental files got past ``offsets``."""
    keys = []
    for path in incr_files(data_dir):
        for _, parts in aof_commands(path.read_bytes()[offsets.get(path, 0):]):
            if parts[0].upper() not in (b"MULTI", b"EXEC", b"SELECT") and len(parts) > 1:
                keys.append(parts[1].decode(errors="replace"))
    return keys


def _views(client: Any) -> dict[bytes, bytes]:
    names = sorted(client.scan_iter(match=f"{SPACE.namespace}:*:view:*", count=1000))
    return dict(zip(names, client.mget(names), strict=True)) if names else {}


def _directory(client: Any) -> dict[bytes, dict[bytes, bytes]]:
    names = sorted(name for name in client.scan_iter(match=f"{SPACE.namespace}:*:dir*", count=1000)
                   if name.endswith((b":dir", b":dir:closed")))
    return {name: client.hgetall(name) for name in names}


def _alive(worker: subprocess.Popen[bytes], log: Path) -> None:
    assert worker.poll() is None, log.read_text()[-3000:]


def _rewrite(client: Any) -> None:
    client.bgrewriteaof()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        info = client.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            return
        time.sleep(0.05)
    raise AssertionError("the AOF rewrite did not finish")


def test_the_views_and_the_directory_are_kept_off_the_aof_and_are_back_as_they_were_after_a_restart_on_it(
    redis_factory: Any, tmp_path: Path,
) -> None:
    server = redis_factory(appendonly=True, appendfsync="always")
    client = connect(server.url)
    tables = Tables(client, SPACE, seed=21)
    tables.open([f"aof{i}" for i in range(6)])
    with workers(server.url):
        tables.play(hands=1)
        for kind in KINDS:
            wait_until(client, SPACE, kind, timeout_s=60)
        _rewrite(client)  # the views as they are now go to the AOF's base: a rewrite writes the dataset
        early, early_directory = _views(client), _directory(client)
        offsets = {path: path.stat().st_size for path in incr_files(server.dir)}
        tables.play(hands=2)
        for kind in KINDS:
            wait_until(client, SPACE, kind, timeout_s=60)
        for partition in range(SPACE.partitions):  # what every kind has passed leaves the feed
            store_of(client, SPACE, "views").trim([partition], KINDS)
    written = _written_keys(server.dir, offsets)
    checkpoints = {kind: {ProjectionKeys(SPACE, kind).checkpoint(p) for p in range(SPACE.partitions)}
                   for kind in KINDS}
    assert any(":ledger:" in key for key in written), "the ledger's documents are written to the AOF"
    assert any(key.endswith(":events") for key in written), "the table streams are written to the AOF"
    assert not [key for key in written if ":view:" in key], "no view is written to the AOF"
    assert not [key for key in written if key.rpartition(":")[2] in ("dir", "closed")], "nor the directory"
    assert not checkpoints["views"] & set(written) and not checkpoints["directory"] & set(written)
    assert checkpoints["ledger"] & set(written) and checkpoints["ratings"] & set(written)
    before, directory = _views(client), _directory(client)
    assert before != early and directory != early_directory

    server.kill(signal.SIGKILL)
    server.start()  # the same AOF: the views as of the rewrite, the rest as of the kill
    assert _views(client) == early, "the views came back from the rewrite, and only from it"
    assert _directory(client) == early_directory
    followed = next(name for name in before if name.endswith(b":spectator"))
    listener = client.pubsub()
    listener.ssubscribe(followed)
    log = tmp_path / "views.log"
    worker = start_worker(server.url, "views", logs=log)
    lobby = start_worker(server.url, "directory", logs=tmp_path / "directory.log")
    try:
        wait_until(client, SPACE, "views", timeout_s=60, check=lambda: _alive(worker, log))
        wait_until(client, SPACE, "directory", timeout_s=60,
                   check=lambda: _alive(lobby, tmp_path / "directory.log"))
    finally:
        for process in (worker, lobby):
            process.terminate()
        for process in (worker, lobby):
            process.wait(timeout=15)
    told = [m["data"] for m in iter(lambda: listener.get_sharded_message(timeout=0.5), None)
            if m["type"] == "smessage"]
    listener.close()
    assert b"" in told, "the rebuild told the view's followers to read it again"
    assert "rebuilding from the table streams" in log.read_text(), "the feed past the rewrite's checkpoint was trimmed"
    assert _views(client) == before, "every view is back as it was before the restart"
    assert _directory(client) == directory, "and the directory"
    assert_identical_to_a_rebuild(client, SPACE)

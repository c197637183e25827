"""`mighty bench durability`: what each durability profile loses, counted.

For each profile (``everysec``, ``always``: ``appendfsync`` of deploy/redis.conf and
deploy/redis-always.conf), against a redis-server of its own:

1. a writer appends one-event commands to ``--tables`` tables through the event store
   for ``--seconds``, counting every acknowledged one (its table and version), while a
   sampler records the size of the AOF's live file every 10 ms;
2. the server is killed with SIGKILL (a process crash: no goodbye, no last fsync);
3. **process crash**: a copy of the data directory as the kill left it is started, and
   every acknowledged command is looked for (a table's head version says which of its
   commands survived);
4. **OS crash, emulated**: what an OS crash keeps is what was fsynced. Under ``always``
   Redis fsyncs before it replies, so every byte written before the last reply is on
   disk: the emulation keeps the file whole (it can only cut what was never fsynced).
   Under ``everysec`` the last fsync may be up to a second old: the emulation cuts the
   AOF back to the size it had one second before the kill (the sampler's record) and
   starts a server on that (``aof-load-truncated yes`` drops a torn last entry). The
   acknowledged commands missing are counted, beside the acknowledgements of the last
   second.

Prints one JSON object per profile under ``profiles``.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from services.redis_runtime import DURABILITY_PROFILES, PrivateRedis, start_private_redis
from services.store.base import EMPTY_HEAD, Head
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore, connect

_SAMPLE_S = 0.01
# Under everysec, while a background fsync is still running Redis postpones its write of
# the AOF buffer, up to 2 s, and replies meanwhile (redis.io, "Persistence": "you may
# lose up to 2 seconds of writes"; its log says so when the 2 s run out): an acknowledged
# command may reach the file up to 2 s after its reply
_POSTPONE_S = 2.0
_POSTPONED = "Asynchronous AOF fsync is taking too long"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench durability")
    parser.add_argument("--seconds", type=float, default=3.0, help="how long the writer writes before the kill")
    parser.add_argument("--tables", type=int, default=16)
    parser.add_argument("--profile", choices=DURABILITY_PROFILES, action="append", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("MIGHTY_LOG_LEVEL", "warning")
    from services.logs import configure_logging

    configure_logging()
    results = {profile: run(profile, args.seconds, args.tables) for profile in args.profile or DURABILITY_PROFILES}
    sys.stdout.write(json.dumps({"profiles": results}, indent=None if args.json else 2) + "\n")
    return 0


def _live_aof(dir: Path) -> Path:
    """The AOF file appends go to (Redis 7 multi-part AOF: the newest ``.incr.aof``)."""
    files = sorted((dir / "appendonlydir").glob("*.incr.aof"), key=lambda p: int(p.name.split(".")[-3]))
    if not files:
        raise RuntimeError(f"no incremental AOF in {dir}")
    return files[-1]


def run(profile: str, seconds: float, tables: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mighty-bench-durability-") as root:
        data = Path(root) / "redis"
        server = start_private_redis(data, durability=profile)
        try:
            acked, sizes, kill_at = _write_then_kill(server, data, seconds, tables)
        finally:
            server.kill()
        aof = _live_aof(data)
        postponed = (data / "redis.log").read_text(errors="replace").count(_POSTPONED)
        crash = _survivors(Path(root) / "process-crash", data, None, acked)
        if profile == "always":
            keep, cut_at = aof.stat().st_size, kill_at  # fsynced before every reply: all on disk
        else:
            times = [t for t, _ in sizes]
            before = max(bisect.bisect_right(times, kill_at - 1.0) - 1, 0)
            cut_at, keep = sizes[before]
        os_crash = _survivors(Path(root) / "os-crash", data, keep, acked)
        last_second = sum(1 for _, _, at in acked if at > kill_at - 1.0)
        return {
            "acknowledged": len(acked),
            "lost_on_process_kill": len(acked) - crash,
            "lost_on_os_crash_emulated": len(acked) - os_crash,
            "acknowledged_in_last_second": last_second,
            # acknowledged after the AOF size the cut keeps was sampled: the most it can take
            "acknowledged_after_the_cut": sum(1 for _, _, at in acked if at > cut_at),
            "acknowledged_after_the_cut_less_the_postponement": sum(
                1 for _, _, at in acked if at > cut_at - _POSTPONE_S),
            "writes_postponed_the_whole_2s": postponed,  # a shorter postponement is not logged
            "aof_bytes_at_kill": aof.stat().st_size,
            "aof_bytes_kept_by_os_crash": keep,
            "commands_per_s": round(len(acked) / seconds),
        }


def _write_then_kill(server: PrivateRedis, data: Path, seconds: float,
                     tables: int) -> tuple[list[tuple[str, int, float]], list[tuple[float, int]], float]:
    client = connect(server.url, retries=0)
    store = RedisEventStore(client, keys=KeySpace(namespace="durability"), idempotency_s=0)
    heads: dict[str, Head] = {f"d{i:03d}": EMPTY_HEAD for i in range(tables)}
    acked: list[tuple[str, int, float]] = []
    sizes: list[tuple[float, int]] = []
    stop = threading.Event()
    aof = _live_aof(data)

    def sample() -> None:
        while not stop.is_set():
            sizes.append((time.monotonic(), aof.stat().st_size))
            time.sleep(_SAMPLE_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        for table_id, head in heads.items():
            n += 1
            event = b'{"n":%d,"pad":"%s"}' % (n, b"x" * 100)
            done = store.append(table_id, [event], expected=head, command_id=f"c{n}", outcome=b"{}")
            heads[table_id] = done.head
            acked.append((table_id, done.head.version, time.monotonic()))
    kill_at = time.monotonic()
    server.kill()
    stop.set()
    sampler.join()
    client.close()
    return acked, sizes, kill_at


def _survivors(copy: Path, data: Path, keep: int | None, acked: list[tuple[str, int, float]]) -> int:
    """Start a server on a copy of ``data`` (its live AOF cut to ``keep`` bytes) and count
    the acknowledged commands it holds."""
    shutil.copytree(data, copy)
    if keep is not None:
        with open(_live_aof(copy), "r+b") as file:
            file.truncate(keep)
    server = start_private_redis(copy, extra_args=["--aof-load-truncated", "yes"])
    try:
        client = connect(server.url)
        store = RedisEventStore(client, keys=KeySpace(namespace="durability"), idempotency_s=0)
        heads = {table_id: store.head(table_id).version for table_id in {t for t, _, _ in acked}}
        client.close()
    finally:
        with contextlib.suppress(Exception):
            server.stop()
    return sum(1 for table_id, version, _ in acked if version <= heads[table_id])


if __name__ == "__main__":
    raise SystemExit(main())

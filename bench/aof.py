"""`mighty bench aof`: the bytes the AOF grows by per command, and what writes them.

Against a redis-server of its own with the AOF on (``appendfsync everysec``, the default
durability profile; never ``REDIS_URL``), with one worker process of each projection
kind running, as ``mighty bench memory`` runs them: ``--tables`` mighty-5 tables are
seated and started, then play ``--hands`` hands each (random legal commands through the
command handler). The AOF's growth while they play (``INFO persistence``
``aof_current_size``, the workers caught up before and after) over the commands played is
``aof_bytes_per_command``. The AOF's new part is then read back (RESP) and its bytes
grouped by what the command writes (its first key, grouped as ``mighty bench memory``
groups keys) and by command name. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.memory import _settle, category, play_hands
from bench.projections import _seat, _wait_ready, _workers
from projections import KINDS
from services.redis_runtime import start_private_redis
from services.store.keys import KeySpace
from services.store.redis_store import connect


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench aof")
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--hands", type=int, default=3, help="hands each table plays")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("MIGHTY_LOG_LEVEL", "warning")
    from services.logs import configure_logging

    configure_logging()
    with contextlib.ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mighty-bench-aof-")))
        server = start_private_redis(root / "redis", appendonly=True, appendfsync="everysec")
        stack.callback(server.stop)
        client = connect(server.url)
        space = KeySpace(namespace=f"benchaof-{secrets.token_hex(4)}")
        (root / "logs").mkdir()
        result = run(client, server.url, space, root / "logs", root / "redis", args)
    sys.stdout.write(json.dumps(result, indent=None if args.json else 2) + "\n")
    return 0


def run(client: Any, url: str, space: KeySpace, logs: Path, data_dir: Path,
        args: argparse.Namespace) -> dict[str, Any]:
    with _workers(url, space, logs, KINDS, 500, keep_feed=False):
        _wait_ready(client, space, KINDS)
        handler, states = _seat(client, space, args.tables)
        _settle(client, space)
        before = _aof_size(client)
        offsets = {path: path.stat().st_size for path in incr_files(data_dir)}
        commands, hands = play_hands(handler, states, args.hands)
        _settle(client, space)
        after = _aof_size(client)
    by_category, by_command, by_both = _breakdown(data_dir, offsets)
    grown = after - before
    return {
        "aof_bytes_per_command": round(grown / commands),
        "aof_bytes_per_hand": round(grown / hands),
        "per_command_by_category": {k: round(v / commands) for k, v in sorted(by_category.items())},
        "per_command_by_redis_command": {k: round(v / commands) for k, v in sorted(by_command.items())},
        "per_command_by_category_and_command": {k: round(v / commands) for k, v in sorted(by_both.items())
                                                if v >= commands},
        "commands": commands,
        "hands": hands,
        "tables": args.tables,
        "variant": "mighty-5",
        "appendfsync": "everysec",
        "method": "INFO persistence aof_current_size, before and after the hands, workers caught up",
    }


def _aof_size(client: Any) -> int:
    return int(client.info("persistence")["aof_current_size"])


def incr_files(data_dir: Path) -> list[Path]:
    return sorted(data_dir.rglob("*.incr.aof"))


def _breakdown(data_dir: Path, offsets: dict[Path, int]) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """The bytes of each command written to the AOF's incremental files since ``offsets``,
    by the group of its first key, by its name, and by both (``feed XGROUP``)."""
    by_category: dict[str, int] = defaultdict(int)
    by_command: dict[str, int] = defaultdict(int)
    by_both: dict[str, int] = defaultdict(int)
    for path in incr_files(data_dir):
        data = path.read_bytes()[offsets.get(path, 0):]
        for size, parts in aof_commands(data):
            name = parts[0].decode().upper()
            key = parts[1].decode(errors="replace") if len(parts) > 1 and name not in ("MULTI", "EXEC", "SELECT") else ""
            by_command[name] += size
            group = category(key) if key else "framing (MULTI, EXEC, SELECT)"
            by_category[group] += size
            by_both[f"{group} {name}" if key else group] += size
    return dict(by_category), dict(by_command), dict(by_both)


def aof_commands(data: bytes) -> list[tuple[int, list[bytes]]]:
    """The RESP arrays of an AOF part, each with its size in bytes."""
    out: list[tuple[int, list[bytes]]] = []
    at = 0
    while at < len(data):
        start = at
        if data[at:at + 1] != b"*":  # an annotation line (``#TS:...``) or a torn tail
            end = data.find(b"\r\n", at)
            if end < 0:
                break
            at = end + 2
            continue
        end = data.index(b"\r\n", at)
        count = int(data[at + 1:end])
        at = end + 2
        parts: list[bytes] = []
        for _ in range(count):
            end = data.index(b"\r\n", at)
            length = int(data[at + 1:end])
            parts.append(data[end + 2:end + 2 + length])
            at = end + 2 + length + 2
        out.append((at - start, parts))
    return out


if __name__ == "__main__":
    raise SystemExit(main())

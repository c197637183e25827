"""`mighty bench entry_layout`: what a table stream costs per hand, by stream entry layout.

The stored mighty-5 fixture stream (``tests/fixtures/streams/mighty-5.jsonl``: 395
entries, 5 hands, its events and command ids as stored) is written ``--tables`` times
into a private redis-server (never ``REDIS_URL``) under each layout of the fields of a
stream entry (docs/store.md, "The stored entry"), with synthetic hashes (32 raw bytes)
and append times (one a command, 2.5 s apart), each event packed as the stores pack it
(``services/store/compact.py``), and measured with ``MEMORY USAGE <key> SAMPLES 0``.
Prints one JSON object: the bytes per hand of each layout and its difference from the
layout stored today, at each ``--node-bytes`` (the server's ``stream-node-max-bytes``;
the deployment sets 2048 since 2026-12-05, Redis's default is 4096). Layouts other than
today's (one field, a record: docs/store.md, "The stored entry") are the ones stored
before (six fields, every hash, then the anchors' only) and candidates, measured and not
taken (docs/performance.md, "Memory").
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from services.redis_runtime import start_private_redis
from services.store import record
from services.store.base import HASH_EVERY
from services.store.compact import pack
from services.store.redis_store import connect

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "streams" / "mighty-5.jsonl"
HANDS_IN_FIXTURE = 5

Entry = dict[str, Any]
Layout = Callable[[int, int, Entry, str | None], dict[str, Any]]


def _hash(table: int, version: int) -> bytes:
    return hashlib.sha256(f"{table}:{version}".encode()).digest()


_PACKED: dict[str, bytes] = {}
FIRST_APPEND_MS = 1_796_495_538_328


def _packed(e: Entry) -> bytes:
    data: str = e["data"]
    if data not in _PACKED:
        _PACKED[data] = pack(data.encode())
    return _PACKED[data]


def _at(e: Entry) -> int:
    """One append time a command (its events share it), 2.5 s after the command before."""
    return FIRST_APPEND_MS + 2500 * int(str(e["command_id"]).rsplit("c", 1)[-1] or 0)


def _every_hash(t: int, v: int, e: Entry, last: str | None) -> dict[str, Any]:
    return {"hv": 2, "v": v, "e": _packed(e), "h": _hash(t, v), "c": e["command_id"], "a": _at(e)}


def _today(t: int, v: int, e: Entry, last: str | None) -> dict[str, Any]:
    """``h`` stored on the anchors only (``HASH_EVERY``), empty on the other entries."""
    return {**_every_hash(t, v, e, last), "h": _hash(t, v) if v % HASH_EVERY == 0 else b""}


def _record_whole_time(t: int, v: int, e: Entry, last: str | None) -> dict[str, Any]:
    """One field ``r``, a record (services/store/record.py): the hash on the anchors, the
    append time (6 bytes) and command id on the heads (an append's first event, anchors,
    version 1)."""
    head = last != e["command_id"] or v % HASH_EVERY == 0 or v == 1
    return {"r": record.encode(_packed(e), hash=_hash(t, v) if v % HASH_EVERY == 0 else None,
                               command_id=e["command_id"] if head else None, at_ms=_at(e) if head else None)}


def _record(t: int, v: int, e: Entry, last: str | None) -> dict[str, Any]:
    """``_record_whole_time``, but a head that is not an anchor nor version 1 stores its
    time as a varint of the ms since the append before's (what ``append.lua`` writes)."""
    if last is None or last == e["command_id"] or v % HASH_EVERY == 0 or v == 1:
        return _record_whole_time(t, v, e, last)
    delta = _at(e) - _at({"command_id": last})
    return {"r": record.encode(_packed(e), command_id=e["command_id"], delta_ms=delta)}


def _record_every_head(t: int, v: int, e: Entry, last: str | None) -> dict[str, Any]:
    """A record that is a head on every entry (the time and the command id each time)."""
    return _record_whole_time(t, v, e, None)


TODAY = (f"r: one record, hash on every {HASH_EVERY}th, time and command id once an append, "
         "the time a delta but on anchors and version 1 (stored today)")
LAYOUTS: dict[str, Layout] = {
    "hv v e h c a, h on every entry (stored until sparse hashes, 2026-12-06)": _every_hash,
    f"hv v e h c a, h empty but on every {HASH_EVERY}th entry (stored until 2026-12-06)": _today,
    TODAY: _record,
    f"r: one record, hash on every {HASH_EVERY}th, time (6 bytes) and command id once an append "
    "(stored until the time delta, 2026-12-06)": _record_whole_time,
    "r: one record, the time and command id on every entry": _record_every_head,
    "hv v e c a (no h: every reader chains the hashes from the head or a known one)":
        lambda t, v, e, last: {k: x for k, x in _every_hash(t, v, e, last).items() if k != "h"},
    "e c a (no hv, v nor h)":
        lambda t, v, e, last: {"e": _packed(e), "c": e["command_id"], "a": _at(e)},
    "e (the event alone)":
        lambda t, v, e, last: {"e": _packed(e)},
}


def measure(client: Any, entries: list[Entry], tables: int, prefix: str) -> dict[str, int]:
    """Bytes per hand of ``tables`` copies of the stream, by layout."""
    per_hand: dict[str, int] = {}
    for number, (name, layout) in enumerate(LAYOUTS.items()):
        used = 0
        for table in range(tables):
            key = f"{prefix}:{number}:{table}"
            last: str | None = None
            for version, entry in enumerate(entries, start=1):
                client.xadd(key, layout(table, version, entry, last), id=f"0-{version}")
                last = entry["command_id"]
            used += int(client.memory_usage(key, samples=0))
            client.delete(key)
        per_hand[name] = round(used / (tables * HANDS_IN_FIXTURE))
    return per_hand


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench entry_layout")
    parser.add_argument("--tables", type=int, default=16)
    parser.add_argument("--node-bytes", type=int, nargs="+", default=[2048])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("MIGHTY_LOG_LEVEL", "warning")
    from services.logs import configure_logging

    configure_logging()
    entries: list[Entry] = [msgspec.json.decode(line) for line in FIXTURE.read_bytes().splitlines()]
    result: dict[str, Any] = {"bench": "entry_layout", "tables": args.tables, "entries_per_table": len(entries),
                              "hands_per_table": HANDS_IN_FIXTURE,
                              "method": "sum of MEMORY USAGE key SAMPLES 0 over the streams, per hand"}
    with contextlib.ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mighty-bench-layout-")))
        server = start_private_redis(root, appendonly=False)
        stack.callback(server.stop)
        client = connect(server.url)
        for node_bytes in args.node_bytes:
            client.config_set("stream-node-max-bytes", node_bytes)
            per_hand = measure(client, entries, args.tables, f"layout{node_bytes}")
            result[f"bytes_per_hand_node_{node_bytes}"] = per_hand
            result[f"vs_today_node_{node_bytes}"] = {name: used - per_hand[TODAY] for name, used in per_hand.items()}
    sys.stdout.write(json.dumps(result, indent=None if args.json else 2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

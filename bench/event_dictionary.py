"""How ``services/store/events-1.zdict`` was made: the preset dictionary stored events are
packed with (services/store/compact.py, docs/store.md, "Events stored packed").

From the stored fixture streams (``tests/fixtures/streams/*.jsonl``: every mighty table
size and Mitigati), each event type's first two distinct events, the rarest types first
and the most frequent last (deflate codes a near match more cheaply), the last
``--bytes`` of that. ``mighty bench event_dictionary --out FILE`` writes it; the stored
dictionary is never rewritten (every event packed with it needs it to be read back): a
better one would be dictionary 2, beside it. Prints the dictionary's size, its sha256 and
what it packs the fixture streams' events to.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "streams"


def fixture_events() -> list[bytes]:
    events: list[bytes] = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        with path.open() as lines:
            events.extend(json.loads(line)["data"].encode() for line in lines)
    return events


def build(events: list[bytes], size: int, per_type: int = 2) -> bytes:
    by_type: dict[str, list[bytes]] = defaultdict(list)
    for event in events:
        kind = json.loads(event)["type"]
        if event not in by_type[kind] and len(by_type[kind]) < per_type:
            by_type[kind].append(event)
    counts: dict[str, int] = defaultdict(int)
    for event in events:
        counts[json.loads(event)["type"]] += 1
    rarest_first = sorted(by_type, key=lambda kind: (counts[kind], kind))
    return b"".join(b"".join(by_type[kind]) for kind in rarest_first)[-size:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench event_dictionary")
    parser.add_argument("--bytes", type=int, default=8192, help="at most this long (the window is 8 KiB)")
    parser.add_argument("--out", type=Path, default=None, help="write the dictionary here")
    parser.add_argument("--json", action="store_true", help="one JSON line (what it prints anyway)")
    args = parser.parse_args(argv)
    events = fixture_events()
    dictionary = build(events, args.bytes)
    if args.out is not None:
        args.out.write_bytes(dictionary)
    from services.store.compact import pack_with

    packed = sum(len(pack_with(dictionary, event)) for event in events)
    sys.stdout.write(json.dumps({"bytes": len(dictionary), "sha256": hashlib.sha256(dictionary).hexdigest(),
                                 "events": len(events), "event_bytes": sum(map(len, events)),
                                 "packed_bytes": packed}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``StreamRead`` (services/store/redis_store.py), the read both Redis stores drive, on a
stream held in a list: how many XRANGEs a read asks for and where they start. Only every
16th entry stores its hash (docs/store.md, "The stored entry"), so a read from the middle
starts at the anchor before and chains to where it returns from, in the one XRANGE."""

from __future__ import annotations

from typing import Any

import pytest

from services.store.base import GENESIS, HASH_EVERY, event_hash
from services.store.redis_store import READ_CHUNK, StreamRead

Entry = tuple[bytes, dict[bytes, bytes]]


def sparse_stream(count: int, every: int = HASH_EVERY) -> list[Entry]:
    """``count`` entries as the append script stores them: ``h`` on every ``every``-th."""
    entries: list[Entry] = []
    prev = GENESIS
    for version in range(1, count + 1):
        data, cid = b"e%d" % version, f"c{version // 3}"
        prev = event_hash(prev, data, cid)
        stored = bytes.fromhex(prev) if version % every == 0 else b""
        entries.append((f"0-{version}".encode(), {b"hv": b"2", b"v": str(version).encode(), b"e": data,
                                                  b"h": stored, b"c": cid.encode(), b"a": b"1"}))
    return entries


def xrange(entries: list[Entry], start: str, end: str, count: int) -> list[Entry]:
    low = int(start.split("-")[1])
    high = None if end == "+" else int(end.split("-")[1])
    found = [e for e in entries if int(e[0].split(b"-")[1]) >= low
             and (high is None or int(e[0].split(b"-")[1]) <= high)]
    return found[:count]


def read(entries: list[Entry], after: int, to: int | None = None) -> tuple[list[Any], list[tuple[str, str, int]]]:
    reading = StreamRead(after, to)
    asked: list[tuple[str, str, int]] = []
    while (query := reading.next_range()) is not None:
        asked.append(query)
        reading.take(xrange(entries, *query))
    return reading.events, asked


@pytest.mark.parametrize("after", [1, 15, 16, 17, 31, 32, 33, 40])
def test_a_read_from_the_middle_asks_one_xrange_from_the_anchor_before(after: int) -> None:
    entries = sparse_stream(45)
    whole, asked = read(entries, 0)
    assert asked == [("0-1", "+", READ_CHUNK)]
    events, asked = read(entries, after)
    anchor = max(after - after % HASH_EVERY, 1)
    assert asked == [(f"0-{anchor}", "+", READ_CHUNK + after - anchor + 1)]
    assert events == whole[after:] and events[0].prev_hash == whole[after - 1].hash


def test_a_stream_storing_every_hash_is_read_from_the_middle_linked_to_entry_k_s_stored_hash() -> None:
    """An older release's layout: entry k's stored hash is the link, whatever the entries
    before it hold (here, garbage the chain would show)."""
    entries = sparse_stream(40, every=1)
    whole, _ = read(entries, 0)
    for n in range(16, 20):  # the entries between the anchor and k: bytes that match no hash
        entries[n] = (entries[n][0], {**entries[n][1], b"e": b"garbage"})
    events, asked = read(entries, 20)
    assert len(asked) == 1 and events == whole[20:]


def test_a_read_whose_anchor_was_deleted_reads_again_from_the_first_entry() -> None:
    entries = sparse_stream(45)
    del entries[31]  # entry 32
    whole, _ = read(entries, 0)
    events, asked = read(entries, 35)
    assert [query[0] for query in asked] == ["0-32", "0-1"]
    assert events == [e for e in whole if e.version > 35]


def test_a_read_longer_than_a_chunk_goes_on_from_its_last_event() -> None:
    entries = sparse_stream(READ_CHUNK + 40)
    whole, _ = read(entries, 0)
    events, asked = read(entries, 20)
    assert [query[0] for query in asked] == ["0-16", f"0-{READ_CHUNK + 21}"]
    assert events == whole[20:]

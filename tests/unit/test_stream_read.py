"""``StreamRead`` (services/store/redis_store.py), the read both Redis stores drive, on a
stream held in a list: how many XRANGEs a read asks for and where they start. Only every
16th entry stores its hash, and a record stores its command id and time only on a head
(docs/store.md, "The stored entry"), a head that is not an anchor nor version 1 its time
as a delta from the time before, so a read from the middle starts at the anchor before
and carries them to where it returns from, in the one XRANGE."""

from __future__ import annotations

from typing import Any

import pytest

from services.store.base import GENESIS, HASH_EVERY, event_hash
from services.store.errors import StoreCorrupt
from services.store.record import HEAD, TIME_DELTA, BadRecord, decode, encode, varint
from services.store.redis_store import READ_CHUNK, LastEntry, StreamRead, last_entry
from tests.stream_entries import as_stored

Entry = tuple[bytes, dict[bytes, bytes]]
LAYOUTS = ["record", "six-fields"]  # what the script writes; what it wrote until 2026-12-06


def sparse_stream(count: int, every: int = HASH_EVERY, layout: str = "six-fields",
                  sizes: tuple[int, ...] = (3,), steps: tuple[int, ...] = (2500,)) -> list[Entry]:
    """``count`` entries as the append script stores them: ``h`` on every ``every``-th;
    appends of ``sizes`` events in turn (each its command id and time, ``steps`` ms after
    the one before's in turn: a negative step is a clock gone back), as records (a head's
    time a delta where the script writes one) or as the six fields of the release before."""
    entries: list[Entry] = []
    prev = GENESIS
    version, append = 0, 0
    at = 1_700_000_000_000
    while version < count:
        size = sizes[append % len(sizes)]
        cid = f"c{append}"
        at += steps[append % len(steps)] if append else 0
        for _ in range(min(size, count - version)):
            version += 1
            data = b"e%d" % version
            prev = event_hash(prev, data, cid)
            stored = bytes.fromhex(prev) if version % every == 0 else b""
            entries.append((f"0-{version}".encode(), {b"hv": b"2", b"v": str(version).encode(), b"e": data,
                                                      b"h": stored, b"c": cid.encode(), b"a": str(at).encode()}))
        append += 1
    return as_stored(entries) if layout == "record" else entries


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


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("after", [1, 15, 16, 17, 31, 32, 33, 40])
def test_a_read_from_the_middle_asks_one_xrange_from_the_anchor_before(after: int, layout: str) -> None:
    entries = sparse_stream(45, layout=layout)
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


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_read_whose_anchor_was_deleted_reads_again_from_the_first_entry(layout: str) -> None:
    entries = sparse_stream(45, layout=layout)
    del entries[31]  # entry 32
    whole, _ = read(entries, 0)
    events, asked = read(entries, 35)
    assert [query[0] for query in asked] == ["0-32", "0-1"]
    assert events == [e for e in whole if e.version > 35]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_read_longer_than_a_chunk_goes_on_from_its_last_event(layout: str) -> None:
    entries = sparse_stream(READ_CHUNK + 40, layout=layout, sizes=(7, 1, 30))
    whole, _ = read(entries, 0)
    events, asked = read(entries, 20)
    assert [query[0] for query in asked] == ["0-16", f"0-{READ_CHUNK + 21}"]
    assert events == whole[20:]


# Records (one field ``r``, services/store/record.py): the command id and time are stored
# on the heads only (the first event of an append, every anchor, version 1).

SIZES = (1, 3, 20, 1, 16, 5, 40, 2)  # appends spanning anchors, one starting on one


def heads(entries: list[Entry]) -> list[int]:
    return [n for n, (_, f) in enumerate(entries, start=1) if f[b"r"][0] & 0x02]


def test_records_store_the_command_id_and_time_on_the_heads_only() -> None:
    entries = sparse_stream(88, layout="record", sizes=SIZES)
    firsts = [1 + sum(SIZES[:n]) for n in range(len(SIZES))]
    assert heads(entries) == sorted({*firsts, *range(16, 89, 16)})
    assert [n for n, (_, f) in enumerate(entries, start=1) if f[b"r"][0] & 0x01] == list(range(16, 89, 16))
    whole, _ = read(entries, 0)
    assert whole == read(sparse_stream(88, sizes=SIZES), 0)[0]  # as the six fields read
    assert [e.command_id for e in whole[:5]] == ["c0", "c1", "c1", "c1", "c2"]
    assert [e.at_ms for e in whole[:5]] == [1_700_000_000_000 + 2500 * n for n in (0, 1, 1, 1, 2)]
    assert [e.version for e in whole if e.hash_stored] == list(range(16, 89, 16))


@pytest.mark.parametrize("layout", [*LAYOUTS, "mixed"])
def test_a_read_after_any_version_is_the_tail_of_a_whole_read_command_ids_and_times_too(layout: str) -> None:
    """``StoredEvent`` equality covers the hash, the previous hash, the command id and the
    time: each read from the middle carries them as the whole read does."""
    if layout == "mixed":  # an old table appended to by this release: six fields, then records
        six, records = sparse_stream(88, sizes=SIZES), sparse_stream(88, layout="record", sizes=SIZES)
        entries = six[:37] + records[37:]
    else:
        entries = sparse_stream(88, layout=layout, sizes=SIZES)
    whole, _ = read(entries, 0)
    assert len(whole) == 88 and whole == read(sparse_stream(88, sizes=SIZES), 0)[0]
    for after in range(89):
        events, asked = read(entries, after)
        assert events == whole[after:], after
        assert len(asked) == 1, after
        for to in (after + 1, after + 17):
            assert read(entries, after, to)[0] == whole[after:to], (after, to)


@pytest.mark.parametrize("gone", [[16], [17], [16, 17], [33], [32, 33], [2], [5, 25]])
def test_a_read_from_the_middle_of_records_whose_heads_were_deleted_links_as_a_whole_read(gone: list[int]) -> None:
    """With a head deleted behind the store's back (an anchor, an append's first event),
    the entries after it carry the command id and time of the head before: wrong, so
    their hashes fail, as in the whole read, which verify names (a time stored as a delta
    is added to the wrong time: the hash does not cover it)."""
    entries = [e for n, e in enumerate(sparse_stream(50, layout="record", sizes=SIZES), start=1) if n not in gone]
    whole, _ = read(entries, 0)
    for after in range(51):
        assert read(entries, after)[0] == [e for e in whole if e.version > after], after


@pytest.mark.parametrize("gone", [[1], [1, 2, 3]])
def test_a_stream_whose_first_entry_was_deleted_is_bad_where_a_delta_has_no_time_before_it(gone: list[int]) -> None:
    """Version 1 stores its time whole: with it deleted, the first head after it that
    stores a delta has no time to add it to. A read that covers it (every read starting
    at the first entry) raises ``BadRecord`` naming it, as the whole read does; a read
    from an anchor after it reads as the other reads from there."""
    entries = [e for n, e in enumerate(sparse_stream(50, layout="record", sizes=SIZES), start=1) if n not in gone]
    first_delta = min(v for v in heads(sparse_stream(50, layout="record", sizes=SIZES)) if v not in gone and v > 1)
    for after in range(HASH_EVERY):
        with pytest.raises(BadRecord) as raised:
            read(entries, after)
        assert raised.value.version == first_delta
    tail, _ = read(entries, HASH_EVERY)
    for after in range(HASH_EVERY, 51):
        assert read(entries, after)[0] == [e for e in tail if e.version > after], after


STEPS = (2500, 1, 0, 90_000, 127, 128, 16_383, 16_384, -40_000, 3_600_000, 2 ** 30)  # 0 to 5 bytes; one back


@pytest.mark.parametrize("sizes", [SIZES, (1,), (2, 15, 1)], ids=["appends", "one-event-appends", "around-anchors"])
def test_a_read_after_every_version_carries_the_time_deltas_as_a_whole_read(sizes: tuple[int, ...]) -> None:
    """Heads store their time as a delta (a varint of 1 to 5 bytes here), but anchors, version
    1 and the head after a clock that went back, which store it whole: every read from the
    middle resolves each time as the whole read does, which gives each event its append's time."""
    entries = sparse_stream(120, layout="record", sizes=sizes, steps=STEPS)
    flags = [f[b"r"][0] for _, f in entries]
    deltas = [v for v, flag in enumerate(flags, start=1) if flag & TIME_DELTA]
    assert deltas and all(flags[v - 1] & HEAD and v % HASH_EVERY and v > 1 for v in deltas)
    whole, _ = read(entries, 0)
    assert whole == read(sparse_stream(120, sizes=sizes, steps=STEPS), 0)[0]  # as the six fields read
    went_back = [v for v, e in enumerate(whole, start=1) if v > 1 and e.at_ms < whole[v - 2].at_ms]
    assert went_back and not set(went_back) & set(deltas)
    for after in range(121):
        assert read(entries, after)[0] == whole[after:], after
        assert read(entries, after, after + 5)[0] == whole[after:after + 5], after
        if after:
            newest_first = entries[:after][::-1][:HASH_EVERY]
            e = whole[after - 1]
            assert last_entry(newest_first) == LastEntry(e.data, e.command_id, e.at_ms), after


def test_a_delta_head_read_alone_has_its_command_id_but_no_time() -> None:
    """``last_entry`` of the newest entry alone (the archive's first look): a head storing
    its time as a delta names its command id, and no time (the archive reads back to the
    anchor before for it)."""
    entries = sparse_stream(20, layout="record", sizes=(17, 3))  # 18: a delta head
    assert decode(entries[17][1][b"r"], 18).delta_ms == 2500
    assert last_entry(entries[:18][::-1][:1]) == LastEntry(b"e18", "c1", None)
    assert last_entry(entries[:18][::-1][:HASH_EVERY]) == LastEntry(b"e18", "c1", 1_700_000_002_500)


@pytest.mark.parametrize("edit", ["low-bit", "high-bit", "continuation", "cut-continuation"])
def test_a_delta_head_whose_time_was_edited_reads_as_another_time_or_is_bad_never_a_crash(edit: str) -> None:
    """The time is not hashed: a delta byte edited behind the store's back reads as another
    time (the chain still verifies), or, where the edit breaks the record's shape (a varint
    run into the command id), as ``BadRecord`` naming its version, on every read over it."""
    entries = sparse_stream(20, layout="record", sizes=(2, 18))  # 3: a head, its delta 2500 (0xc4 0x13)
    raw = bytearray(entries[2][1][b"r"])
    assert raw[:3] == b"\x06\xc4\x13"
    if edit == "low-bit":
        raw[1] ^= 0x01
    elif edit == "high-bit":
        raw[2] ^= 0x40
    elif edit == "continuation":
        raw[2] |= 0x80  # the length byte is read as the delta's, then the command id's first as its length
    else:
        raw[1] &= 0x7F  # one byte: the second byte (0x13) is read as the command id's length
    entries[2] = record_entry(3, bytes(raw))
    good, _ = read(sparse_stream(20, layout="record", sizes=(2, 18)), 0)
    for after in (0, 1, 2):
        try:
            events, _ = read(entries, after)
        except BadRecord as bad:
            assert bad.version == 3 and edit in ("continuation", "cut-continuation")
            continue
        assert edit in ("low-bit", "high-bit")
        assert [(e.hash, e.command_id) for e in events] == [(e.hash, e.command_id) for e in good[after:]]
        assert [e.at_ms for e in events[2 - after:]] != [e.at_ms for e in good[2:]]


def record_entry(version: int, raw: bytes) -> Entry:
    return f"0-{version}".encode(), {b"r": raw}


@pytest.mark.parametrize("raw", [
    b"",  # nothing
    b"\x04" + b"e",  # a delta time on a record that is not a head
    b"\x05" + bytes(32) + b"e",
    b"\x07" + bytes(32) + b"\x05\x01ce",  # a delta on a record that stores its hash
    b"\x08" + b"e",  # a flag this release does not know
    b"\x81" + bytes(32) + b"e",
    b"\x01" + bytes(31),  # cut in its hash
    b"\x02" + bytes(5),  # cut in its time
    b"\x02" + bytes(6) + b"\x05abc",  # cut in its command id
    b"\x02" + bytes(6) + b"\x00e",  # an empty command id
    b"\x02" + bytes(6) + b"\x02\xff\xfee",  # not ASCII
    # a newline: the hash's input is the id, "\n", the event, so "c1\nk" + "zz" hashes as "c1" + "k\nzz"
    b"\x02" + bytes(6) + b"\x04c1\nkzz",
    b"\x02" + bytes(6) + b"\x03c 1e",  # a space: no command id has one
    b"\x06",  # cut in its delta
    b"\x06\x80",
    b"\x06\x80\x80\x80\x80\x80\x80\x80\x01\x01ce",  # a delta longer than 7 bytes
    b"\x06\x85\x00\x01ce",  # not in its shortest form
    b"\x06\x05\x00e",  # an empty command id after a delta
], ids=["empty", "delta-without-head", "delta-with-hash-without-head", "delta-with-hash", "unknown-flag", "high-flag", "cut-hash",
        "cut-time", "cut-command-id", "empty-command-id", "not-ascii", "newline-in-command-id", "space-in-command-id",
        "cut-delta", "cut-delta-continued", "delta-too-long", "delta-not-shortest", "delta-empty-command-id"])
def test_a_record_this_release_cannot_read_is_store_corrupt_naming_its_version(raw: bytes) -> None:
    entries = sparse_stream(20, layout="record")
    entries[6] = record_entry(7, raw)
    for after in (0, 3):
        with pytest.raises(BadRecord) as raised:
            read(entries, after)
        assert isinstance(raised.value, StoreCorrupt) and raised.value.version == 7


def test_a_record_round_trips_its_parts() -> None:
    digest = bytes(range(32))
    for hash_ in (None, digest):
        for head in (None, ("c-1:x", 1_796_495_538_328)):
            raw = encode(b"\x01packed", hash=hash_, command_id=head and head[0], at_ms=head and head[1])
            found = decode(raw, 16 if hash_ else 5)
            assert (found.hash, found.command_id, found.at_ms, found.event, found.delta_ms) == (
                hash_, head and head[0], head and head[1], b"\x01packed", None)
    for delta in (0, 1, 127, 128, 16_383, 16_384, 2 ** 48, 2 ** 49 - 1):
        raw = encode(b"\x01packed", command_id="c-1:x", delta_ms=delta)
        assert raw[0] == HEAD | TIME_DELTA and raw[1:1 + len(varint(delta))] == varint(delta)
        assert decode(raw, 5) == (None, "c-1:x", None, b"\x01packed", delta)
    assert encode(b"", command_id="c", at_ms=2 ** 48 - 1) == b"\x02" + b"\xff" * 6 + b"\x01c"
    assert encode(b"", command_id="c", delta_ms=2500) == b"\x06\xc4\x13\x01c"
    for wrong in ({"hash": digest, "command_id": "c", "delta_ms": 1}, {"command_id": "c"},
                  {"command_id": "c", "at_ms": 1, "delta_ms": 1}, {"delta_ms": 1}, {"command_id": "c", "delta_ms": -1},
                  {"command_id": "c", "delta_ms": 2 ** 49}):
        with pytest.raises(ValueError):
            encode(b"e", **wrong)


@pytest.mark.parametrize("version", [1, 16, 32])
def test_a_delta_time_on_version_1_or_an_anchor_is_bad(version: int) -> None:
    """Reads from the middle start at an anchor, and a whole read at version 1: there the
    time is stored whole, never as a delta (which would have no time to be added to)."""
    raw = b"\x06\x05\x01ce"
    with pytest.raises(BadRecord) as raised:
        decode(raw, version)
    assert raised.value.version == version
    assert decode(raw, version + 1).delta_ms == 5


def test_the_last_entry_has_the_command_id_and_time_of_the_head_before_it() -> None:
    """``last_entry`` (the archive's scan for closed tables): the newest entry's event, and
    the command id and time of the newest head among the entries read (newest first); an
    XREVRANGE of ``HASH_EVERY`` entries always holds one."""
    entries = sparse_stream(45, layout="record", sizes=(40, 5))  # 41..45: one append, 41 its head
    newest_first = entries[::-1]
    only = last_entry(newest_first[:1])
    assert only == LastEntry(b"e45", None, None)
    assert last_entry(newest_first[:HASH_EVERY]) == LastEntry(b"e45", "c1", 1_700_000_000_000 + 2500)
    assert last_entry(sparse_stream(45, sizes=(40, 5))[::-1][:1]) == LastEntry(b"e45", "c1", 1_700_000_000_000 + 2500)
    assert last_entry([]) is None
    with pytest.raises(BadRecord):
        last_entry([record_entry(46, b"\x08e")])


def test_the_archive_scan_finds_the_time_of_a_last_entry_that_is_not_a_head() -> None:
    import fakeredis

    from services.archive.worker import _time_of_last
    from services.store.base import EMPTY_HEAD
    from services.store.redis_store import RedisEventStore

    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2)
    store = RedisEventStore(client)
    head = store.append("t1", [b"a"] * 3, expected=EMPTY_HEAD, command_id="first", outcome=b"").head
    store.append("t1", [b"b"] * 20, expected=head, command_id="last", outcome=b"")  # 4..23, heads 4 and 16
    key = store.keys.table("t1").events
    newest = last_entry(client.xrevrange(key, count=1))
    assert newest is not None and newest.command_id is None and newest.at_ms is None
    assert _time_of_last(client, key) == store.read("t1")[-1].at_ms is not None

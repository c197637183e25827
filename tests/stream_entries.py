"""Table stream entries as the tests edit them: a record entry (one field ``r``,
``services/store/record.py``) seen as the six fields an older release wrote (``hv v e h c
a``, the command id and time carried into the records that are not heads), and back.

A drill that forges or edits entries works on the six fields (``as_fields``) and writes
them back as records (``as_stored``), as someone with write access who knows the layout
could: an entry is written as a head where its command id or time differs from the entry
before's (or it is version 1 or an anchor), its time as a delta where the script writes
one (a head that is not an anchor nor version 1, after a record, its time not before the
entry before's), so a stream this release wrote comes back byte for byte. An entry that
holds a link (``p``), or names no hash version 2, is written as it is (the layouts of
older releases)."""

from __future__ import annotations

from typing import Any

from services.store.base import HASH_EVERY, HASH_V2
from services.store.record import FIELD, BadRecord, decode, encode

Entries = list[tuple[bytes, dict[bytes, bytes]]]


def version_of(entry_id: bytes) -> int:
    return int(bytes(entry_id).partition(b"-")[2])


def as_fields(entries: Any) -> Entries:
    """Each record entry as six fields (its hash raw, empty where it stores none); the
    entries of older layouts as they are."""
    out: Entries = []
    cid, at = b"", b""
    for entry_id, fields in entries:
        raw = fields.get(FIELD)
        if raw is None:
            out.append((entry_id, dict(fields)))
            cid, at = fields.get(b"c", cid), fields.get(b"a", at)
            continue
        version = version_of(entry_id)
        record = decode(bytes(raw), version)
        if record.command_id is not None:
            if record.delta_ms is not None and not at:
                raise BadRecord(version, "its time is a delta, and no entry before it has a time to add it to")
            at_ms = record.at_ms if record.delta_ms is None else int(at) + record.delta_ms
            cid, at = record.command_id.encode(), str(at_ms).encode()
        out.append((entry_id, {b"hv": b"2", b"v": str(version).encode(), b"e": record.event,
                               b"h": record.hash or b"", b"c": cid, b"a": at}))
    return out


def as_stored(entries: Entries) -> Entries:
    """``as_fields``'s entries as the store writes them: records, but those of older
    layouts (a link ``p``, a hash version other than 2, no time), as they are."""
    out: Entries = []
    before: tuple[bytes, bytes] | None = None
    after_record = False  # whether the entry before was written as a record (its time known)
    for entry_id, fields in entries:
        if (b"p" in fields or fields.get(b"hv") != str(HASH_V2).encode() or FIELD in fields
                or b"a" not in fields):
            out.append((entry_id, fields))
            before, after_record = (fields.get(b"c", b""), fields.get(b"a", b"")), False
            continue
        version = version_of(entry_id)
        stamp = (fields[b"c"], fields[b"a"])
        stored = bytes(fields[b"h"])
        digest = bytes.fromhex(stored.decode()) if len(stored) == 64 else stored or None
        whole = version == 1 or version % HASH_EVERY == 0 or digest is not None  # a record with a hash: no delta
        head = whole or stamp != before
        at_ms = int(stamp[1]) if head else None
        delta = None
        if head and not whole and after_record and before is not None and int(stamp[1]) >= int(before[1]):
            at_ms, delta = None, int(stamp[1]) - int(before[1])
        raw = encode(bytes(fields[b"e"]), hash=digest, command_id=stamp[0].decode() if head else None,
                     at_ms=at_ms, delta_ms=delta)
        out.append((entry_id, {FIELD: raw}))
        before, after_record = stamp, True
    return out

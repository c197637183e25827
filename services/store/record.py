"""A table stream entry as one binary record (docs/store.md, "The stored entry").

Since 2026-12-06 the append script (``append.lua``) writes each event as a stream entry of
one field, ``r``, whose value is a record; the entry's id is ``0-<version>`` as before, so
the version is not stored again. The record's bytes:

* byte 0, flags: ``HAS_HASH`` (0x01): the entry's hash follows, its 32 bytes (on an anchor,
  a version that is a multiple of ``HASH_EVERY``); ``HEAD`` (0x02): the append time and
  the command id (1 length byte, then its ASCII bytes) follow; ``TIME_DELTA`` (0x04, only
  with ``HEAD``, since 2026-12-06 too): the time is an unsigned LEB128 varint of the ms
  since the time of the entry before it (what readers carry), not 6 bytes big-endian of
  ms since the epoch (the server's clock). Any other bit set, or ``TIME_DELTA`` without
  ``HEAD``, with ``HAS_HASH``, on an anchor or on version 1: ``BadRecord`` (room for later
  layouts).
* then the event, packed (``compact.pack``): the rest of the bytes.

A record is a *head* on the first event of every append, on every anchor and on version 1;
every other record has the command id and time of the entry before it (the events of one
append share them), which the readers carry forward as they carry the hash. A head that is
not an anchor nor version 1 stores its time as a delta when the script knows the time of
the append before (docs/store.md, "The stored entry"); anchors and version 1 store it
whole, so a read from the middle (it starts at an anchor) always has a time to add a
delta to. Every record is of hash version 2 (the time is not hashed). This module only
encodes and decodes (a delta as it is: ``Record.delta_ms``); ``redis_store.StreamRead``
carries the hash, the command id and the time through a read, and adds the deltas.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from services.store.base import HASH_EVERY
from services.store.errors import StoreCorrupt

FIELD: Final = b"r"  # the one field of a record entry
HAS_HASH: Final = 0x01
HEAD: Final = 0x02
TIME_DELTA: Final = 0x04  # with HEAD: the time is a varint of ms since the entry before's
KNOWN_FLAGS: Final = HAS_HASH | HEAD | TIME_DELTA
HASH_BYTES: Final = 32
AT_BYTES: Final = 6  # ms since the epoch, big-endian: up to year 10889
MAX_DELTA_BYTES: Final = 7  # a varint of 7 bytes holds 49 bits: any difference of two 6-byte times
MAX_COMMAND_ID_BYTES: Final = 128  # keys.check_command_id; the script refuses longer ids
# what keys.check_command_id lets through, as bytes: the hash's input is the command id,
# "\n", then the event, so an id holding "\n" would make that boundary ambiguous
_COMMAND_ID: Final = re.compile(rb"[A-Za-z0-9_.:-]+")


class Record(NamedTuple):
    """A record's parts as stored: ``hash`` (32 bytes) None when not stored; ``command_id``
    None when the record is not a head; ``at_ms`` the time of a head that stores it whole,
    ``delta_ms`` that of a head that stores it as a delta (ms after the time of the entry
    before: the reader adds them), None otherwise; ``event`` packed, as stored."""

    hash: bytes | None
    command_id: str | None
    at_ms: int | None
    event: bytes
    delta_ms: int | None = None


class BadRecord(StoreCorrupt):
    """A record this release cannot read (a flag it does not know, cut short, a command id
    that is not one). ``version`` is its entry's version, for ``mighty verify`` to name."""

    def __init__(self, version: int, problem: str) -> None:
        super().__init__(f"stream entry {version} is not a record this release reads: {problem}")
        self.version = version
        self.problem = problem

    @property
    def problem_text(self) -> str:
        """What ``mighty verify`` and the API's verify say of the entry."""
        return f"it is not a record this release reads: {self.problem}"


def encode(event: bytes, *, hash: bytes | None = None, command_id: str | None = None,
           at_ms: int | None = None, delta_ms: int | None = None) -> bytes:
    """A record's bytes (what ``append.lua`` writes): ``hash`` as its 32 bytes or None; a
    head when ``command_id`` is given (with ``at_ms``, its time whole, or ``delta_ms``, its
    time as ms after the entry before's; not both); ``event`` packed, as stored."""
    flags = 0
    parts: list[bytes] = []
    if hash is not None:
        if len(hash) != HASH_BYTES:
            raise ValueError(f"a record stores a hash as its {HASH_BYTES} bytes, not {len(hash)}")
        flags |= HAS_HASH
        parts.append(hash)
    if command_id is not None:
        cid = command_id.encode("ascii")
        if not 0 < len(cid) <= MAX_COMMAND_ID_BYTES or (at_ms is None) == (delta_ms is None):
            raise ValueError("a head record needs a command id of 1 to 128 bytes and a time, whole or a delta")
        flags |= HEAD
        if delta_ms is None:
            assert at_ms is not None
            stamp = at_ms.to_bytes(AT_BYTES, "big")
        else:
            if hash is not None:
                raise ValueError("an anchor stores its time whole (a read from the middle starts there)")
            flags |= TIME_DELTA
            stamp = varint(delta_ms)
        parts += [stamp, bytes((len(cid),)), cid]
    elif at_ms is not None or delta_ms is not None:
        raise ValueError("only a head record stores a time")
    return bytes((flags,)) + b"".join(parts) + event


def varint(n: int) -> bytes:
    """``n`` (0 up to 2^49 - 1) as an unsigned LEB128 varint: 7 bits a byte, low bits first,
    the high bit set on every byte but the last (what ``append.lua`` writes)."""
    if not 0 <= n < 1 << (7 * MAX_DELTA_BYTES):
        raise ValueError(f"a time delta is 0 to 2^49 - 1 ms, not {n}")
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def is_time_delta(raw: bytes) -> bool:
    """Whether a record stores its time as a delta (its flags say so; not checked further)."""
    return bool(raw) and bool(raw[0] & TIME_DELTA)


def decode(raw: bytes, version: int) -> Record:
    """The parts of a stored record (of the entry of ``version``); ``BadRecord`` when it is
    not one this release reads."""
    if not raw:
        raise BadRecord(version, "it is empty")
    flags = raw[0]
    if flags & ~KNOWN_FLAGS:
        raise BadRecord(version, f"flags {flags:#04x} name a layout this release does not know")
    delta = flags & TIME_DELTA
    if delta and (flags & HAS_HASH or not flags & HEAD or version == 1 or version % HASH_EVERY == 0):
        raise BadRecord(version, "its time is a delta where none can be (a record that is not a head, "
                                 "that stores its hash, an anchor or version 1)")
    at = 1
    digest = None
    if flags & HAS_HASH:
        digest = raw[1:1 + HASH_BYTES]
        at += HASH_BYTES
        if len(raw) < at:
            raise BadRecord(version, "it is cut short in its hash")
    if not flags & HEAD:
        return Record(digest, None, None, raw[at:])
    at_ms: int | None = None
    delta_ms: int | None = None
    if delta:
        delta_ms, at = _read_varint(raw, at, version)
    else:
        if len(raw) < at + AT_BYTES:
            raise BadRecord(version, "it is cut short in its time")
        at_ms = int.from_bytes(raw[at:at + AT_BYTES], "big")
        at += AT_BYTES
    if len(raw) < at + 1:
        raise BadRecord(version, "it is cut short in its time")
    size = raw[at]
    start = at + 1
    if not 0 < size <= MAX_COMMAND_ID_BYTES or len(raw) < start + size:
        raise BadRecord(version, "it is cut short in its command id, or holds an empty or too long one")
    cid = raw[start:start + size]
    if not _COMMAND_ID.fullmatch(cid):  # the script stores no other (keys.check_command_id)
        raise BadRecord(version, "its command id holds a character no command id has")
    command_id = cid.decode("ascii")
    return Record(digest, command_id, at_ms, raw[start + size:], delta_ms)


def _read_varint(raw: bytes, at: int, version: int) -> tuple[int, int]:
    """The varint at ``raw[at:]`` and the offset after it; ``BadRecord`` when it is cut
    short, longer than ``MAX_DELTA_BYTES`` or not in its shortest form (a record has one
    encoding: what ``varint`` writes)."""
    value = 0
    for n in range(MAX_DELTA_BYTES):
        if at + n >= len(raw):
            raise BadRecord(version, "it is cut short in its time")
        byte = raw[at + n]
        value |= (byte & 0x7F) << (7 * n)
        if not byte & 0x80:
            if byte == 0 and n > 0:
                raise BadRecord(version, "its time delta is not in its shortest form")
            return value, at + n + 1
    raise BadRecord(version, f"its time delta is longer than {MAX_DELTA_BYTES} bytes")


def at_after(stored: Record, before_ms: int | None, version: int) -> int | None:
    """A head's time: its own, or its delta added to ``before_ms``, the time of the entry
    before (what a reader carries); ``BadRecord`` for a delta with no time before it (not
    in a stream the script wrote: version 1 and the anchors store theirs whole)."""
    if stored.delta_ms is None:
        return stored.at_ms
    if before_ms is None:
        raise BadRecord(version, "its time is a delta, and no entry before it has a time to add it to")
    return before_ms + stored.delta_ms

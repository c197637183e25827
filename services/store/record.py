"""A table stream entry as one binary record (docs/store.md, "The stored entry").

Since 2026-12-06 the append script (``append.lua``) writes each event as a stream entry of
one field, ``r``, whose value is a record; the entry's id is ``0-<version>`` as before, so
the version is not stored again. The record's bytes:

* byte 0, flags: ``HAS_HASH`` (0x01): the entry's hash follows, its 32 bytes (on an anchor,
  a version that is a multiple of ``HASH_EVERY``); ``HEAD`` (0x02): the append time (6 bytes,
  big-endian ms, the server's clock) and the command id (1 length byte, then its ASCII
  bytes) follow. Any other bit set: ``StoreCorrupt`` (room for later layouts).
* then the event, packed (``compact.pack``): the rest of the bytes.

A record is a *head* on the first event of every append, on every anchor and on version 1;
every other record has the command id and time of the entry before it (the events of one
append share them), which the readers carry forward as they carry the hash. Every record
is of hash version 2. This module only encodes and decodes; ``redis_store.StreamRead``
carries the hash, the command id and the time through a read.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from services.store.errors import StoreCorrupt

FIELD: Final = b"r"  # the one field of a record entry
HAS_HASH: Final = 0x01
HEAD: Final = 0x02
KNOWN_FLAGS: Final = HAS_HASH | HEAD
HASH_BYTES: Final = 32
AT_BYTES: Final = 6  # ms since the epoch, big-endian: up to year 10889
MAX_COMMAND_ID_BYTES: Final = 128  # keys.check_command_id; the script refuses longer ids
# what keys.check_command_id lets through, as bytes: the hash's input is the command id,
# "\n", then the event, so an id holding "\n" would make that boundary ambiguous
_COMMAND_ID: Final = re.compile(rb"[A-Za-z0-9_.:-]+")


class Record(NamedTuple):
    """A record's parts as stored: ``hash`` (32 bytes) None when not stored; ``command_id``
    and ``at_ms`` None when the record is not a head; ``event`` packed, as stored."""

    hash: bytes | None
    command_id: str | None
    at_ms: int | None
    event: bytes


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
           at_ms: int | None = None) -> bytes:
    """A record's bytes (what ``append.lua`` writes): ``hash`` as its 32 bytes or None; a
    head when ``command_id`` is given (``at_ms`` then too); ``event`` packed, as stored."""
    flags = 0
    parts: list[bytes] = []
    if hash is not None:
        if len(hash) != HASH_BYTES:
            raise ValueError(f"a record stores a hash as its {HASH_BYTES} bytes, not {len(hash)}")
        flags |= HAS_HASH
        parts.append(hash)
    if command_id is not None:
        cid = command_id.encode("ascii")
        if not 0 < len(cid) <= MAX_COMMAND_ID_BYTES or at_ms is None:
            raise ValueError("a head record needs a command id of 1 to 128 bytes and a time")
        flags |= HEAD
        parts += [at_ms.to_bytes(AT_BYTES, "big"), bytes((len(cid),)), cid]
    return bytes((flags,)) + b"".join(parts) + event


def decode(raw: bytes, version: int) -> Record:
    """The parts of a stored record (of the entry of ``version``); ``BadRecord`` when it is
    not one this release reads."""
    if not raw:
        raise BadRecord(version, "it is empty")
    flags = raw[0]
    if flags & ~KNOWN_FLAGS:
        raise BadRecord(version, f"flags {flags:#04x} name a layout this release does not know")
    at = 1
    digest = None
    if flags & HAS_HASH:
        digest = raw[1:1 + HASH_BYTES]
        at += HASH_BYTES
        if len(raw) < at:
            raise BadRecord(version, "it is cut short in its hash")
    if not flags & HEAD:
        return Record(digest, None, None, raw[at:])
    if len(raw) < at + AT_BYTES + 1:
        raise BadRecord(version, "it is cut short in its time")
    at_ms = int.from_bytes(raw[at:at + AT_BYTES], "big")
    size = raw[at + AT_BYTES]
    start = at + AT_BYTES + 1
    if not 0 < size <= MAX_COMMAND_ID_BYTES or len(raw) < start + size:
        raise BadRecord(version, "it is cut short in its command id, or holds an empty or too long one")
    cid = raw[start:start + size]
    if not _COMMAND_ID.fullmatch(cid):  # the script stores no other (keys.check_command_id)
        raise BadRecord(version, "its command id holds a character no command id has")
    command_id = cid.decode("ascii")
    return Record(digest, command_id, at_ms, raw[start + size:])

"""Events stored packed: raw deflate (zlib, the standard library) primed with a preset
dictionary of typical events, so that a stored ``card_played`` takes about 20 bytes, not 80
(docs/store.md, "Events stored packed").

Packing is the stores' business alone: the hash chain, every reader and every report see
the event's own bytes (``pack`` runs after the append has hashed them; the readers
``unpack`` before anything else looks). A packed event's first byte names its dictionary
(1 to 8); a domain event is JSON and starts with ``{``, so an event stored as it is is told
apart by its first byte. The few events that do not shrink are stored as they are, unless
they start with one of those bytes themselves (the stores take any bytes): those are
always packed.

A packed event that cannot be unpacked (its bytes were edited in Redis) reads as the bytes
stored (``as_read``): they match no hash, so ``mighty verify`` names the entry, and no
reader takes it for another event (docs/store.md, "What `mighty verify` checks").

A dictionary, once events are packed with it, never changes (the events could not be read
back): its sha256 is checked at import. ``bench/event_dictionary.py`` says how dictionary 1
was made; a better one would be dictionary 2, beside it.
"""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path
from typing import Final

from services.store.errors import StoreCorrupt

MAX_UNPACKED_BYTES: Final = 64 * 1024  # base.MAX_EVENT_BYTES: no append stores more
_WINDOW_BITS: Final = 13  # an 8 KiB window, which the dictionary fills
_MARKERS: Final = range(1, 9)
_DICTIONARY_SHA256: Final = {1: "35ae66b05cd65d557d34b2cf11889c499d5b6996bd3683a2c61fa7a7816fa9f0"}
PACKED_WITH: Final = 1  # the dictionary every append packs with


def _dictionary(number: int) -> bytes:
    data = (Path(__file__).with_name(f"events-{number}.zdict")).read_bytes()
    found = hashlib.sha256(data).hexdigest()
    if found != _DICTIONARY_SHA256[number]:
        raise RuntimeError(f"events-{number}.zdict was changed (sha256 {found}): stored events need it as it was")
    return data


DICTIONARIES: Final = {number: _dictionary(number) for number in _DICTIONARY_SHA256}


def _primed(dictionary: bytes) -> zlib._Compress:
    # level 6 (level 9 packs the fixture events 0.8 % smaller, 15 % slower); memLevel 4: a
    # 2K-entry match table, which ``copy`` clones per event: 5.5 us a card_played here, not
    # 16 at memLevel 9, for the same bytes (the events are short); unpacking it, 1.1 us
    return zlib.compressobj(6, zlib.DEFLATED, -_WINDOW_BITS, 4, zlib.Z_DEFAULT_STRATEGY, zdict=dictionary)


_PRIMED: Final = {number: _primed(dictionary) for number, dictionary in DICTIONARIES.items()}


def pack_with(dictionary: bytes, event: bytes) -> bytes:
    """``event`` deflated with ``dictionary`` (no marker): what a dictionary would give."""
    deflate = _primed(dictionary)
    return deflate.compress(event) + deflate.flush()


def pack(event: bytes) -> bytes:
    """What the stores write for ``event``: packed when that is shorter (or must be)."""
    deflate = _PRIMED[PACKED_WITH].copy()  # a copy of the primed state: no dictionary to read again
    packed = bytes((PACKED_WITH,)) + deflate.compress(event) + deflate.flush()
    if len(packed) < len(event) or (event and event[0] in _MARKERS):
        return packed
    return event


def unpack(stored: bytes) -> bytes:
    """The event's own bytes from what a store holds; ``StoreCorrupt`` when a packed event
    cannot be read back (cut, altered, from an unknown dictionary, or unpacking to more
    than an event may hold)."""
    if not stored or stored[0] not in _MARKERS:
        return stored
    dictionary = DICTIONARIES.get(stored[0])
    if dictionary is None:
        raise StoreCorrupt(f"an event is packed with dictionary {stored[0]}, which this release does not have")
    inflate = zlib.decompressobj(-_WINDOW_BITS, zdict=dictionary)
    try:
        event = inflate.decompress(stored[1:], MAX_UNPACKED_BYTES + 1)
    except zlib.error as error:
        raise StoreCorrupt(f"a packed event cannot be unpacked: {error}") from None
    if not inflate.eof or inflate.unused_data or len(event) > MAX_UNPACKED_BYTES:
        raise StoreCorrupt("a packed event is cut short, followed by other bytes, or too large")
    return event


def as_read(stored: bytes) -> bytes:
    """What the readers see of a stored event: the event, or, when it cannot be unpacked,
    the bytes as stored (which fail the entry's hash and decode as no event)."""
    try:
        return unpack(stored)
    except StoreCorrupt:
        return stored

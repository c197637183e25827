"""What a projection produces: documents, named relative to their partition.

A document is a string key (``field`` is None) or one field of a hash. The worker maps a
name to a Redis key under the partition's hash tag (``mighty:{p07}:`` + name), so every
document of a partition lives in that partition's cluster slot, beside its feed and
checkpoint. ``None`` as a value deletes the document; a ``LastWord`` is announced to the
document's followers, then deleted (a closed table's seat views).

Every document is stored as MessagePack (``encode``): about 30 % smaller than its JSON
(a seat view in play 885 bytes against 1,267, a spectator view 821 against 1,170), and
Redis keeps every seat's view of every live table. It encodes deterministically (msgspec
Structs: fixed field order), so a rebuild from the streams produces the same bytes as the
live workers did. The turns (``projections/turns.py``) stay JSON (``encode_json``): they
are announced to the bot and timer workers, whose earlier releases read JSON only, and
the timer worker's Lua scripts keep a turn as JSON (cjson). What a client receives is no
stored document: the gateway decodes the view and sends JSON of its own making.

Releases before 2026-12-06 stored every document as JSON, so a reader takes both
(``Decoder``, ``decode``), told apart by the first byte: a JSON document is an object or
an array (``{``, ``[``), a MessagePack one a map or an array (0x80-0x9f, 0xdc-0xdf).
A document an earlier release stored stays JSON until a worker writes it again.
"""

from __future__ import annotations

import functools
from typing import Any, Generic, NamedTuple, TypeVar, cast

import msgspec

T = TypeVar("T")


class DocKey(NamedTuple):
    name: str
    field: str | None = None


Docs = dict[DocKey, bytes | None]


class LastWord(bytes):
    """A string document's last version: announced to its followers as any change is,
    then not kept (the key is deleted; a rebuild makes none). A closed table's seat views
    are one (projections/views.py): each seat's follower learns the table closed, and
    nobody acts there again, so a reader after that is shown the table from its spectator
    view (the gateway, ``services/gateway/routes/play.py`` ``rendered``)."""

    __slots__ = ()


_msgpack = msgspec.msgpack.Encoder()
_json = msgspec.json.Encoder()
_JSON_STARTS = (b"{", b"[")  # no MessagePack document begins so: fixints 0x7b, 0x5b are not documents
# fixmap, fixarray, array 16/32, map 16/32
_MSGPACK_STARTS = frozenset(bytes([b]) for b in (*range(0x80, 0xA0), 0xDC, 0xDD, 0xDE, 0xDF))
# a map: a JSON object, a MessagePack fixmap, map 16/32
_MAP_STARTS = frozenset((b"{", *(bytes([b]) for b in (*range(0x80, 0x90), 0xDE, 0xDF))))


def encode(value: object) -> bytes:  # a msgspec Struct (a game's ledger is typed by its protocol)
    return _msgpack.encode(value)


def encode_json(value: object) -> bytes:
    """A document some reader takes only as JSON (the turns: see the module's docstring)."""
    return _json.encode(value)


def is_json(data: bytes) -> bool:
    """Whether a stored document is JSON (an earlier release's), not MessagePack."""
    return data[:1] in _JSON_STARTS


class Decoder(Generic[T]):
    """Reads a stored document of type ``T`` in either encoding (built once per type: a
    msgspec decoder is built for its type, then reused). A ``T`` stored as a row (an
    ``array_like`` Struct: its fields in order, without their names) is read from the map
    an earlier release stored too (``_mapped``)."""

    __slots__ = ("_json", "_msgpack", "_mapped")

    def __init__(self, type: type[T]) -> None:
        self._json = msgspec.json.Decoder(type)
        self._msgpack = msgspec.msgpack.Decoder(type)
        self._mapped = _Mapped(type) if _is_row(type) else None

    def decode(self, data: bytes) -> T:
        if self._mapped is not None and data[:1] in _MAP_STARTS:
            return self._mapped.decode(data)
        return self._json.decode(data) if is_json(data) else self._msgpack.decode(data)


def _is_row(type: Any) -> bool:
    config = getattr(type, "__struct_config__", None)
    return bool(config is not None and config.array_like)


class _Mapped(Generic[T]):
    """A row type's document as an earlier release stored it, a map of its fields by name:
    read as a twin Struct of the same fields, then made the row type."""

    __slots__ = ("_type", "_json", "_msgpack")

    def __init__(self, row: type[T]) -> None:
        fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
        for info in msgspec.structs.fields(cast("type[msgspec.Struct]", row)):
            if info.default is not msgspec.NODEFAULT:
                fields.append((info.name, info.type, info.default))
            elif info.default_factory is not msgspec.NODEFAULT:
                fields.append((info.name, info.type, msgspec.field(default_factory=info.default_factory)))
            else:
                fields.append((info.name, info.type))
        twin = msgspec.defstruct(f"{row.__name__}Mapped", fields, kw_only=True)
        _ROWS[row] = (frozenset(f[0] for f in fields), frozenset(f[0] for f in fields if len(f) == 2))
        self._type = row
        self._json = msgspec.json.Decoder(twin)
        self._msgpack = msgspec.msgpack.Decoder(twin)

    def decode(self, data: bytes) -> T:
        twin = self._json.decode(data) if is_json(data) else self._msgpack.decode(data)
        return self._type(**msgspec.structs.asdict(twin))


# Each row type a ``Decoder`` reads: its fields' names, and the names of those without a
# default (``same_document`` tells by them which row type a stored map is a document of)
_ROWS: dict[Any, tuple[frozenset[str], frozenset[str]]] = {}


def _same_row(stored: bytes, rebuilt: bytes) -> bool:
    """Whether ``stored``, the map of a row type's document, reads as the ``rebuilt`` row:
    its names are the fields of a row type (each field without a default among them), and
    read as that type it encodes to the rebuilt bytes (its values by name, not position)."""
    try:
        names = decode(stored)
    except msgspec.DecodeError:
        return False
    if not isinstance(names, dict) or not all(isinstance(name, str) for name in names):
        return False
    for row, (fields, required) in list(_ROWS.items()):
        if required <= names.keys() <= fields:
            try:
                if encode(_decoder(row).decode(stored)) == rebuilt:
                    return True
            except msgspec.DecodeError:
                continue
    return False


@functools.lru_cache(maxsize=64)
def _decoder(type: Any) -> Decoder[Any]:
    return Decoder(type)


def decode(data: bytes, type: Any = Any) -> Any:
    """A stored document, in either encoding, as ``type`` (default: plain dicts, lists and
    scalars). For occasional reads; a hot path keeps its own ``Decoder``."""
    return _decoder(type).decode(data)


def is_msgpack(data: bytes) -> bool:
    """Whether stored bytes are a MessagePack document: a map or an array."""
    return data[:1] in _MSGPACK_STARTS


def as_text(data: bytes) -> str:
    """A stored value as text, for a person (``mighty projections check``): a MessagePack
    document as its JSON; JSON, or a value that is no document (the ``ratings:hours``
    marker ``1``), as it is; bytes that read as neither (damaged: what a check is to
    show) as their repr."""
    try:
        return _json.encode(decode(data)).decode() if is_msgpack(data) else data.decode()
    except (msgspec.DecodeError, UnicodeDecodeError):
        return repr(data)


def same_document(stored: bytes | None, rebuilt: bytes | None) -> bool:
    """Whether a stored document is the rebuilt one: the same bytes, or, written by an
    earlier release, the same document, decoded: as JSON (its MessagePack would not be the
    rebuilt bytes: msgspec heads the map of a Struct of 16 fields or more, some of them
    left out, with a 16-bit count, and a dict of 15 with a 1-byte one), or as the map of
    a document now stored as a row (``Decoder``: its values, in order, are the row)."""
    if stored == rebuilt:
        return True
    if stored is None or rebuilt is None or is_json(rebuilt):
        return False
    if stored[:1] in _MAP_STARTS and rebuilt[:1] not in _MAP_STARTS:
        return _same_row(stored, rebuilt)
    if not is_json(stored):
        return False
    try:
        return bool(msgspec.json.decode(stored) == msgspec.msgpack.decode(rebuilt))
    except msgspec.DecodeError:
        return False


def changed(rendered: Docs, docs: Docs) -> Docs:
    """The documents of ``docs`` that differ from what was last rendered; remembers them.

    A document never rendered in this process counts as changed (after a restart the
    worker does not know what is stored, so it writes, or deletes, once more).
    """
    out: Docs = {}
    for key, data in docs.items():
        if key in rendered and rendered[key] == data:
            continue
        rendered[key] = data
        out[key] = data
    return out

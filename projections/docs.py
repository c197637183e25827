"""What a projection produces: documents, named relative to their partition.

A document is a string key (``field`` is None) or one field of a hash. The worker maps a
name to a Redis key under the partition's hash tag (``mighty:{p07}:`` + name), so every
document of a partition lives in that partition's cluster slot, beside its feed and
checkpoint. ``None`` as a value deletes the document; a ``LastWord`` is announced to the
document's followers, then deleted (a closed table's seat views).

Every document encodes deterministically (msgspec Structs: fixed field order), so a
rebuild from the streams produces the same bytes as the live workers did.
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec


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

encoder = msgspec.json.Encoder()


def encode(value: object) -> bytes:  # a msgspec Struct (a game's ledger is typed by its protocol)
    return encoder.encode(value)


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

"""Pure projections: ``fold(view, event) -> view`` for per-seat views, score ledgers,
the lobby directory and the hands the ratings read (docs/ratings.md), and the documents they render (docs/architecture.md, "Layers"; docs/workers.md).

No I/O, clock or randomness: the workers in ``services/projection/`` feed these events from
the partition feeds and store the documents.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from domain.table import TableEvent
from projections.directory import DirectoryProjection
from projections.docs import DocKey, Docs, LastWord
from projections.ledger import LedgerProjection
from projections.ratings import HandsProjection
from projections.views import ViewsProjection

KINDS = ("views", "ledger", "directory", "ratings")


class Projection(Protocol):
    """One kind of projection over the tables of one partition."""

    kind: str

    def known(self, table_id: str) -> bool: ...

    def apply(self, table_id: str, version: int, event: TableEvent, at_ms: int | None = None) -> None:
        """Fold the table's event at ``version``, appended at ``at_ms`` (the store's clock,
        ms; None when the store did not keep it)."""
        ...

    def flush(self) -> Docs:
        """The documents changed since the last flush (``None``: delete it)."""
        ...


def new_projection(kind: str) -> ViewsProjection | LedgerProjection | DirectoryProjection | HandsProjection:
    if kind == "views":
        return ViewsProjection()
    if kind == "ledger":
        return LedgerProjection()
    if kind == "directory":
        return DirectoryProjection()
    if kind == "ratings":
        return HandsProjection()
    raise ValueError(f"unknown projection kind {kind!r}; known: {', '.join(KINDS)}")


Entry = tuple[str, int, TableEvent] | tuple[str, int, TableEvent, int | None]


def replay(projection: Projection, entries: Iterable[Entry], batch: int = 0) -> dict[DocKey, bytes]:
    """Every document a projection ends with after ``entries`` (table, version, event and,
    where the store kept it, the event's append time in ms), flushing every ``batch``
    entries (0: once, at the end). The result does not depend on ``batch``: that is what
    makes a rebuild byte-identical to the live workers."""
    docs: dict[DocKey, bytes] = {}
    for count, entry in enumerate(entries, start=1):
        table_id, version, event = entry[0], entry[1], entry[2]
        projection.apply(table_id, version, event, entry[3] if len(entry) == 4 else None)
        if batch and count % batch == 0:
            _merge(docs, projection.flush())
    _merge(docs, projection.flush())
    return docs


def _merge(docs: dict[DocKey, bytes], changes: Docs) -> None:
    for key, data in changes.items():
        if data is None or isinstance(data, LastWord):  # a last word is not kept
            docs.pop(key, None)
        else:
            docs[key] = data

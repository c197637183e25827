"""Pure projections: ``fold(view, event) -> view`` for per-seat views, score ledgers and
the lobby directory, and the documents they render (DESIGN.md §2, §5).

No I/O, clock or randomness: the workers in ``services/projection/`` feed these events from
the partition feeds and store the documents.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from domain.table import TableEvent
from projections.directory import DirectoryProjection
from projections.docs import DocKey, Docs
from projections.ledger import LedgerProjection
from projections.views import ViewsProjection

KINDS = ("views", "ledger", "directory")


class Projection(Protocol):
    """One kind of projection over the tables of one partition."""

    kind: str

    def known(self, table_id: str) -> bool: ...

    def apply(self, table_id: str, version: int, event: TableEvent) -> None: ...

    def flush(self) -> Docs:
        """The documents changed since the last flush (``None``: delete it)."""
        ...


def new_projection(kind: str) -> ViewsProjection | LedgerProjection | DirectoryProjection:
    if kind == "views":
        return ViewsProjection()
    if kind == "ledger":
        return LedgerProjection()
    if kind == "directory":
        return DirectoryProjection()
    raise ValueError(f"unknown projection kind {kind!r}; known: {', '.join(KINDS)}")


def replay(
    projection: Projection, entries: Iterable[tuple[str, int, TableEvent]], batch: int = 0
) -> dict[DocKey, bytes]:
    """Every document a projection ends with after ``entries`` (table, version, event),
    flushing every ``batch`` entries (0: once, at the end). The result does not depend
    on ``batch``: that is what makes a rebuild byte-identical to the live workers."""
    docs: dict[DocKey, bytes] = {}
    for count, (table_id, version, event) in enumerate(entries, start=1):
        projection.apply(table_id, version, event)
        if batch and count % batch == 0:
            _merge(docs, projection.flush())
    _merge(docs, projection.flush())
    return docs


def _merge(docs: dict[DocKey, bytes], changes: Docs) -> None:
    for key, data in changes.items():
        if data is None:
            docs.pop(key, None)
        else:
            docs[key] = data

"""Typed errors of the archive (docs/archive.md). They extend the store's, so the CLI and
a gateway map them like any store error: an unreachable PostgreSQL is ``store_unavailable``
to a caller (exit 4), a disagreement between Redis and PostgreSQL is ``store_corrupt``."""

from __future__ import annotations

from services.store.errors import StoreCorrupt, StoreUnavailable


class ArchiveUnavailable(StoreUnavailable):
    """PostgreSQL could not be reached, or no archive was configured for a table that has
    been archived: its events are nowhere else, so the read is refused, never answered empty."""

    code = "archive_unavailable"


class ArchiveConflict(StoreCorrupt):
    """PostgreSQL already holds another stream under this table id: nothing is overwritten
    and nothing is deleted from Redis; an operator must look."""

    code = "archive_conflict"


class ArchiveMismatch(StoreCorrupt):
    """What PostgreSQL holds after the copy is not what Redis holds (or does not verify):
    the table stays in Redis."""

    code = "archive_mismatch"

"""The archive in PostgreSQL: closed tables' streams, row for row as Redis stored them.

``PostgresArchive(url)`` holds one connection, opened on first use and opened again after
a failure (PostgreSQL restarted, the network dropped), behind a lock so threads may share
it. Every failure to reach PostgreSQL is ``ArchiveUnavailable``: a reader is refused, and
the archive worker deletes nothing from Redis (docs/archive.md, "Crash safety").
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Final, Literal

import msgspec
import psycopg
from psycopg.types.json import Jsonb

from services.archive.errors import ArchiveConflict, ArchiveUnavailable
from services.archive.migrate import migrate
from services.store.base import Head, StoredEvent

_CONNECT_TIMEOUT_S: Final = 5
_BIGINT_MAX: Final = (1 << 63) - 1


class HandRow(msgspec.Struct, frozen=True):
    hand_no: int
    status: str  # the event that ended the hand (its tag), or ``cut_short``
    scores: tuple[int, ...] | None = None


class ChatRow(msgspec.Struct, frozen=True):
    """A chat message as the table's chat stream held it: its id (``<ms>-<n>``) and bytes."""

    message_id: str
    data: bytes

    @property
    def order(self) -> tuple[int, int]:
        ms, _, n = self.message_id.partition("-")
        return int(ms), int(n)


class TableRow(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    variant: str
    name: str
    closed_ms: int
    version: int
    head: str
    created_ms: int | None = None


Written = Literal["written", "present"]


def _at(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC)


class PostgresArchive:
    """The archive of one deployment: every row carries the key namespace it came from,
    so several namespaces (deployments, benchmarks) can share one database."""

    def __init__(self, url: str, *, namespace: str, connect_timeout_s: int = _CONNECT_TIMEOUT_S) -> None:
        self.url = url
        self.namespace = namespace
        self.connect_timeout_s = connect_timeout_s
        self._conn: psycopg.Connection[tuple[Any, ...]] | None = None
        self._lock = threading.RLock()

    # ------------------------------------------------------------ connection

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        """The connection, (re)opened as needed; a failure closes it and raises
        ``ArchiveUnavailable`` (an operational error) or lets a programming error through."""
        with self._lock:
            try:
                if self._conn is None or self._conn.closed or self._conn.broken:
                    self._conn = psycopg.connect(self.url, autocommit=True,
                                                 connect_timeout=self.connect_timeout_s)
                yield self._conn
            except psycopg.OperationalError as error:
                self._drop()
                raise ArchiveUnavailable(f"PostgreSQL is unreachable: {_first_line(error)}") from error
            except psycopg.errors.UndefinedTable as error:
                raise ArchiveUnavailable(
                    "the archive's schema is missing: start `mighty worker archive` once "
                    f"(it applies the migrations): {_first_line(error)}") from error

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def migrate(self) -> list[int]:
        with self.connection() as conn:
            return migrate(conn)

    def close(self) -> None:
        with self._lock:
            self._drop()

    # ------------------------------------------------------------ writes

    def write(self, table: TableRow, events: Sequence[StoredEvent], hands: Sequence[HandRow],
              chat: Sequence[ChatRow] = ()) -> Written:
        """Store a table, its hands, its events and its chat in one transaction; ``present``
        when the very same stream (version and head) is already there (a rerun after a
        crash between the copy and the delete: then only the chat messages not there yet
        are added, as the chat may have grown meanwhile). Another stream under the id:
        ``ArchiveConflict``."""
        with self.connection() as conn:
            found = self._head_row(conn, table.table_id)
            if found is not None:
                return self._present(conn, table, found, chat)
            try:
                with conn.transaction():
                    self._insert(conn, table, events, hands)
                    self._insert_chat(conn, table.table_id, chat)
            except psycopg.errors.UniqueViolation:  # another worker won the race meanwhile
                found = self._head_row(conn, table.table_id)
                if found is None:
                    raise
                return self._present(conn, table, found, chat)
            return "written"

    def _present(self, conn: psycopg.Connection[tuple[Any, ...]], table: TableRow, found: Head,
                 chat: Sequence[ChatRow]) -> Written:
        written = self._same(table, found)
        with conn.transaction():
            self._insert_chat(conn, table.table_id, chat)
        return written

    def _insert_chat(self, conn: psycopg.Connection[tuple[Any, ...]], table_id: str,
                     chat: Sequence[ChatRow]) -> None:
        if not chat:
            return
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO archive_chat (namespace, table_id, ms, seq, data) VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT DO NOTHING",
                [(self.namespace, table_id, *row.order, row.data) for row in chat])

    def _same(self, table: TableRow, found: Head) -> Written:
        if found != Head(table.version, table.head):
            raise ArchiveConflict(
                f"the archive holds table {table.table_id} at version {found.version} head "
                f"{found.hash[:12]}…, Redis at version {table.version} head {table.head[:12]}…")
        return "present"

    def _insert(self, conn: psycopg.Connection[tuple[Any, ...]], table: TableRow,
                events: Sequence[StoredEvent], hands: Sequence[HandRow]) -> None:
        ns = self.namespace
        conn.execute(
            "INSERT INTO archive_tables (namespace, table_id, variant, name, created_at, closed_at,"
            " version, head_hash) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (ns, table.table_id, table.variant, table.name, _at(table.created_ms), _at(table.closed_ms),
             table.version, table.head))
        with conn.cursor() as cur:
            if hands:
                cur.executemany(
                    "INSERT INTO archive_hands (namespace, table_id, hand_no, status, scores)"
                    " VALUES (%s, %s, %s, %s, %s)",
                    [(ns, table.table_id, h.hand_no, h.status,
                      None if h.scores is None else Jsonb(list(h.scores))) for h in hands])
            # one statement for every event: the completeness trigger sees them all at once
            with cur.copy("COPY archive_events (namespace, table_id, version, command_id, data, hash,"
                          " prev_hash, hash_version, appended_ms) FROM STDIN") as copy:
                for event in events:
                    copy.write_row((ns, table.table_id, event.version, event.command_id, event.data,
                                    event.hash, event.prev_hash, event.hash_version, event.at_ms))

    # ------------------------------------------------------------ reads

    def _head_row(self, conn: psycopg.Connection[tuple[Any, ...]], table_id: str) -> Head | None:
        row = conn.execute("SELECT version, head_hash FROM archive_tables WHERE namespace = %s AND table_id = %s",
                           (self.namespace, table_id)).fetchone()
        return None if row is None else Head(int(row[0]), str(row[1]))

    def head(self, table_id: str) -> Head | None:
        """The archived table's head, or None if it is not archived."""
        with self.connection() as conn:
            return self._head_row(conn, table_id)

    def read(self, table_id: str, after_version: int = 0, to_version: int | None = None) -> list[StoredEvent]:
        """Events with ``after_version < version <= to_version``, in order, as stored."""
        top = (1 << 31) - 1 if to_version is None else to_version
        with self.connection() as conn:
            rows = conn.execute(
                "SELECT version, data, hash, prev_hash, command_id, hash_version, appended_ms FROM archive_events"
                " WHERE namespace = %s AND table_id = %s AND version > %s AND version <= %s"
                " ORDER BY version", (self.namespace, table_id, after_version, top)).fetchall()
        return [StoredEvent(int(v), bytes(data), str(h), str(p), str(c), hash_version=int(hv),
                            at_ms=None if at is None else int(at))
                for v, data, h, p, c, hv, at in rows]

    def chat(self, table_id: str, after: str | None = None, count: int | None = None) -> list[tuple[str, bytes]]:
        """The archived table's chat messages as ``(id, bytes)``, oldest first: those after
        the message id ``after``, or (``after`` None) the latest ``count`` (None: all)."""
        top = (1 << 62) if count is None else count
        with self.connection() as conn:
            if after is None:
                rows = conn.execute(
                    "SELECT ms, seq, data FROM (SELECT ms, seq, data FROM archive_chat"
                    " WHERE namespace = %s AND table_id = %s ORDER BY ms DESC, seq DESC LIMIT %s) AS latest"
                    " ORDER BY ms, seq", (self.namespace, table_id, top)).fetchall()
            else:
                ms, _, seq = after.partition("-")
                if max(int(ms), int(seq or 0)) > _BIGINT_MAX:  # past any id: nothing after it
                    return []
                rows = conn.execute(
                    "SELECT ms, seq, data FROM archive_chat WHERE namespace = %s AND table_id = %s"
                    " AND (ms, seq) > (%s, %s) ORDER BY ms, seq LIMIT %s",
                    (self.namespace, table_id, int(ms), int(seq or 0), top)).fetchall()
        return [(f"{ms}-{seq}", bytes(data)) for ms, seq, data in rows]

    def hands(self, table_id: str) -> list[HandRow]:
        with self.connection() as conn:
            rows = conn.execute(
                "SELECT hand_no, status, scores FROM archive_hands WHERE namespace = %s AND table_id = %s"
                " ORDER BY hand_no", (self.namespace, table_id)).fetchall()
        return [HandRow(int(n), str(s), None if sc is None else tuple(sc)) for n, s, sc in rows]

    def table(self, table_id: str) -> TableRow | None:
        with self.connection() as conn:
            row = conn.execute(
                "SELECT table_id, variant, name, created_at, closed_at, version, head_hash FROM archive_tables"
                " WHERE namespace = %s AND table_id = %s", (self.namespace, table_id)).fetchone()
        if row is None:
            return None
        created = None if row[3] is None else round(row[3].timestamp() * 1000)
        return TableRow(table_id=row[0], variant=row[1], name=row[2], created_ms=created,
                        closed_ms=round(row[4].timestamp() * 1000), version=row[5], head=row[6])

    def table_ids(self) -> list[str]:
        with self.connection() as conn:
            rows = conn.execute("SELECT table_id FROM archive_tables WHERE namespace = %s ORDER BY table_id",
                                (self.namespace,)).fetchall()
        return [str(row[0]) for row in rows]


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__



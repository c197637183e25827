"""The archive worker's discovery of closed tables (docs/archive.md, step 1) on record
streams: a closed table whose last record is not a head is scored by its head's time, and
an unreadable record among the entries read for it passes the table over (logged), never
the whole pass."""

from __future__ import annotations

from typing import Any, cast

import fakeredis

from domain.codec import encode_event
from domain.table import TableClosed
from services.archive.postgres import PostgresArchive
from services.archive.reads import ArchivedEventStore
from services.archive.worker import ArchiveWorker, PassReport
from services.store.base import EMPTY_HEAD
from services.store.keys import KeySpace

SPACE = KeySpace(4, namespace="discover")
CLOSED = encode_event(TableClosed(reason="idle"))


def _worker() -> tuple[ArchiveWorker, Any]:
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2)
    store = ArchivedEventStore(client, keys=SPACE)
    return ArchiveWorker(store, cast(PostgresArchive, None)), client


def _closed_by_a_later_event_of_its_append(worker: ArchiveWorker) -> None:
    """Table t1: version 1, then one append of 2, 3 and the close, 4: not a head."""
    store = worker.store
    head = store.append("t1", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"").head
    store.append("t1", [b"b", b"c", CLOSED], expected=head, command_id="c2", outcome=b"")


def test_a_table_closed_by_an_appends_later_event_is_scored_by_that_appends_time() -> None:
    worker, client = _worker()
    _closed_by_a_later_event_of_its_append(worker)
    worker.discover(SPACE.partition_of("t1"), report := PassReport())
    assert report.discovered == 1
    scored = client.zscore(worker.keys.closed(SPACE.partition_of("t1")), "t1")
    assert scored == worker.store.read("t1")[1].at_ms, "the time of the append that closed it"


def test_an_unreadable_record_before_the_last_passes_the_table_over_not_the_pass() -> None:
    worker, client = _worker()
    _closed_by_a_later_event_of_its_append(worker)
    key = SPACE.table("t1").events
    entries = client.xrange(key)
    client.delete(key)
    for entry_id, fields in entries:  # entry 3: a flag this release does not know
        client.xadd(key, {"r": b"\x08junk"} if entry_id == b"0-3" else fields, id=entry_id)
    worker.discover(SPACE.partition_of("t1"), report := PassReport())
    assert report.discovered == 0
    assert client.zcard(worker.keys.closed(SPACE.partition_of("t1"))) == 0

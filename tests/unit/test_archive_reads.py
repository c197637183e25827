"""The archive's read-through layer and its summary of a table, without PostgreSQL: a
table Redis knows only by its index entry is never read as a new, empty table."""

from __future__ import annotations

import random

import fakeredis
import pytest

from domain.table import CloseTable, CreateTable, Submission
from services.archive.errors import ArchiveUnavailable
from services.archive.keys import IndexEntry, encode_entry
from services.archive.reads import ArchivedEventStore
from services.archive.summary import CUT_SHORT, NotArchivable, summarize
from services.commands.tables import table_handler
from services.players import next_submission, seating
from services.store.base import Head
from services.store.keys import KeySpace

SPACE = KeySpace(4, namespace="unit")


def played(store: ArchivedEventStore, table_id: str, hands: int, cut_short: bool = False) -> None:
    handler = table_handler(store)
    rng = random.Random(3)
    n = 0

    def send(submission: Submission) -> None:
        nonlocal n
        handler.handle(table_id, submission, command_id=f"{table_id}-{n}")
        n += 1

    for submission in [Submission(CreateTable(name="t"), "ana"), *seating(["ana", "bo", "cy", "di", "ed"])]:
        send(submission)
    while handler.state_of(table_id)[0].hands_scored < hands:
        move = next_submission(handler.state_of(table_id)[0], rng)
        assert move is not None
        send(move)
    if cut_short:  # a new deal and a bid or two, then the close
        for _ in range(3):
            move = next_submission(handler.state_of(table_id)[0], rng)
            assert move is not None
            send(move)
    send(Submission(CloseTable(reason="over")))


@pytest.fixture
def store() -> ArchivedEventStore:
    return ArchivedEventStore(fakeredis.FakeRedis(), keys=SPACE)


def test_an_archived_table_without_an_archive_is_refused_not_read_as_empty(store: ArchivedEventStore) -> None:
    store.client.hset(store.archive_keys.index_of("gone"), "gone", encode_entry(IndexEntry(1, 42, "a" * 64)))
    with pytest.raises(ArchiveUnavailable) as refused:
        store.read("gone")
    assert refused.value.code == "archive_unavailable" and "MIGHTY_ARCHIVE_URL" in refused.value.message
    assert store.head("gone") == Head(42, "a" * 64)  # the head needs no archive: the entry holds it
    assert "gone" in store.table_ids()
    assert store.read("never") == [] and store.head("never").version == 0  # an unknown table is new


def test_a_live_table_reads_from_redis_without_the_index(store: ArchivedEventStore) -> None:
    played(store, "live", hands=1)
    events = store.read("live")
    assert events and store.read("live", 2, 4) == events[2:4]
    assert store.archived_ids(SPACE.partition_of("live")) == []


def test_the_summary_lists_each_hand_and_how_it_ended(store: ArchivedEventStore) -> None:
    played(store, "done", hands=2, cut_short=True)
    stored = store.read("done")
    row, hands, seats = summarize("done", stored, closed_ms=5, created_ms=None)
    assert (row.variant, row.name, row.version, row.head, seats) == ("mighty-5", "t", len(stored), stored[-1].hash, 5)
    scored = [h for h in hands if h.status == "hand_scored"]
    assert len(scored) == 2 and all(h.scores is not None and len(h.scores) == 5 for h in scored)
    assert hands[-1].status == CUT_SHORT and [h.hand_no for h in hands] == list(range(len(hands)))


def test_a_stream_that_is_not_a_closed_table_is_not_summarized(store: ArchivedEventStore) -> None:
    played(store, "done", hands=1)
    with pytest.raises(NotArchivable):
        summarize("done", store.read("done")[:-1], closed_ms=0, created_ms=None)

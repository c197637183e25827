"""``mighty verify`` and the checkpointed audit over streams that store only every 16th
entry's hash (docs/store.md, "The stored entry", "What `mighty verify` checks"): an entry
edited between two anchors is named where it can be proven (by the feed while it holds
the entry, by the replay where the rules tell), else at the next stored hash that no
longer matches, naming the entries the edit lies among, or at the meta's head past the
last anchor; an anchor must keep its hash."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import fakeredis
import msgspec
import pytest
import redis

from domain.table import CreateTable, Submission
from services.audit import verify_events
from services.audit.checkpoint import START, Audit
from services.commands.tables import table_handler
from services.players import next_submission, seating
from services.store.base import HASH_EVERY, FeedEntry, StoredEvent
from services.store.compact import pack, unpack
from services.store.redis_store import RedisEventStore
from tests.stream_entries import as_fields, as_stored
from tests.unit.test_audit_checkpoint import audited, same_as_whole

TABLE = "t1"
Fields = dict[Any, Any]  # a stream entry's fields as redis-py gives them (bytes)


@pytest.fixture
def store() -> RedisEventStore:
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2)
    store = RedisEventStore(client)
    handler = table_handler(store)
    rng = random.Random(5)
    sent = [Submission(CreateTable(), "p0"), *seating([f"p{i}" for i in range(5)])]
    for n, sub in enumerate(sent):
        handler.handle(TABLE, sub, command_id=f"c{n}")
    n = len(sent)
    while handler.state_of(TABLE)[0].hands_scored < 2:
        following = next_submission(handler.state_of(TABLE)[0], rng)
        assert following is not None
        handler.handle(TABLE, following, command_id=f"c{n}")
        n += 1
    return store


def edit(store: RedisEventStore, version: int, change: Callable[[Fields], Fields]) -> None:
    """Entry ``version`` rewritten in place, as someone with write access could."""
    client: redis.Redis = store.client
    key = store.keys.table(TABLE).events
    entries = as_fields(client.xrange(key))  # six fields each (tests/stream_entries.py)
    client.delete(key)
    edited = [(entry_id, change(fields) if entry_id == f"0-{version}".encode() else fields)
              for entry_id, fields in entries]
    for entry_id, fields in as_stored(edited):
        client.xadd(key, fields, id=entry_id)


def other_bytes(fields: Fields) -> Fields:
    """The event's JSON with a space before its last brace: the same event, other bytes."""
    return {**fields, b"e": pack(unpack(fields[b"e"])[:-1] + b" }")}


def feed(store: RedisEventStore) -> list[FeedEntry]:
    return [e for e in store.read_feed(store.partition_of(TABLE), count=10_000) if e.table_id == TABLE]


def audit_of(stored: list[StoredEvent]) -> Audit:
    audit = Audit(TABLE, START)
    audit.take(stored, complete=True)
    return audit


def test_a_faithful_sparse_stream_verifies_with_its_hashes_stored_at_the_anchors(store: RedisEventStore) -> None:
    stored = store.read(TABLE)
    assert [e.version for e in stored if e.hash_stored] == list(range(HASH_EVERY, len(stored) + 1, HASH_EVERY))
    assert verify_events(TABLE, stored, store.head(TABLE), feed(store)).finding is None
    assert audit_of(stored).finding is None


def test_an_entry_edited_between_anchors_is_named_by_the_feed_while_it_holds_it(store: RedisEventStore) -> None:
    edit(store, 26, other_bytes)
    stored = store.read(TABLE)
    finding = verify_events(TABLE, stored, store.head(TABLE), feed(store)).finding
    assert finding is not None and finding.version == 26 and "feed entry" in finding.problem


def test_an_entry_edited_between_anchors_is_named_at_the_next_anchor_without_the_feed(
        store: RedisEventStore) -> None:
    edit(store, 26, other_bytes)
    stored = store.read(TABLE)
    finding = verify_events(TABLE, stored, store.head(TABLE), []).finding
    assert finding is not None and (finding.version, finding.since) == (32, 17)
    assert finding.problem == "the stored hash of event 32 does not match: one of events 17–32 was changed"
    assert audit_of(stored).finding == verify_events(TABLE, stored).finding == finding


def test_an_edit_the_rules_tell_is_named_at_its_own_entry_by_the_replay(store: RedisEventStore) -> None:
    stored = store.read(TABLE)
    scored = next(e.version for e in stored if b'"type":"hand_scored"' in e.data and e.version % HASH_EVERY)

    def forged(fields: Fields) -> Fields:
        event = msgspec.json.decode(unpack(fields[b"e"]))
        event["scores"] = [*event["scores"][1:], event["scores"][0]]
        return {**fields, b"e": pack(msgspec.json.encode(event))}

    edit(store, scored, forged)
    edited = store.read(TABLE)
    finding = verify_events(TABLE, edited, store.head(TABLE), []).finding
    assert finding is not None and finding.version == scored and "rules derive" in finding.problem
    assert audit_of(edited).finding == verify_events(TABLE, edited).finding == finding


def test_an_entry_edited_after_the_last_anchor_is_named_by_the_meta_head(store: RedisEventStore) -> None:
    last = len(store.read(TABLE))
    assert last % HASH_EVERY, "the drill needs entries after the last anchor"
    anchor = last - last % HASH_EVERY
    edit(store, last - 1, other_bytes)
    stored = store.read(TABLE)
    finding = verify_events(TABLE, stored, store.head(TABLE), []).finding
    assert finding is not None and (finding.version, finding.since) == (last, anchor + 1)
    assert f"one of events {anchor + 1}–{last} was changed" in finding.problem
    with_feed = verify_events(TABLE, stored, store.head(TABLE), feed(store)).finding
    assert with_feed is not None and with_feed.version == last - 1


def test_an_anchor_whose_stored_hash_was_edited_is_named_there(store: RedisEventStore) -> None:
    edit(store, 32, lambda fields: {**fields, b"h": bytes(32)})
    stored = store.read(TABLE)
    finding = verify_events(TABLE, stored, store.head(TABLE), []).finding
    assert finding is not None and (finding.version, finding.since) == (32, 17)
    assert audit_of(stored).finding == finding
    with_feed = verify_events(TABLE, stored, store.head(TABLE), feed(store)).finding
    assert with_feed is not None and with_feed.version == 32  # the feed holds its true hash


def test_an_anchor_whose_hash_was_removed_is_named_there(store: RedisEventStore) -> None:
    edit(store, 32, lambda fields: {**fields, b"h": b""})
    stored = store.read(TABLE)
    assert [e.hash for e in stored] == [e.hash for e in store.read(TABLE, 0)]  # the chain itself holds
    finding = verify_events(TABLE, stored, store.head(TABLE), feed(store)).finding
    assert finding is not None and finding.version == 32 and "stores no hash" in finding.problem
    assert audit_of(stored).finding == finding


def test_a_checkpoint_is_taken_only_at_a_hand_boundary_a_stored_hash_at_or_after_it_proved(
        store: RedisEventStore) -> None:
    stored = store.read(TABLE)
    last_anchor = len(stored) - len(stored) % HASH_EVERY
    every_hash = audit_of([replace(e, hash_stored=True) for e in stored]).saved  # as an older release stored it
    assert every_hash.version > last_anchor, "the drill needs a hand boundary after the last anchor"
    saved = audit_of(stored).saved
    assert 0 < saved.version <= last_anchor
    for slices, resume in (([7, 3], False), ([100_000], False), ([120], True)):
        same_as_whole(audited(stored, slices, resume), stored)


def test_a_resumed_audit_names_an_edit_after_its_checkpoint_at_the_next_anchor(store: RedisEventStore) -> None:
    stored = store.read(TABLE)
    checkpoint = audit_of(stored[:60]).saved
    assert checkpoint.version > 0
    at = checkpoint.version + 1 if (checkpoint.version + 1) % HASH_EVERY else checkpoint.version + 2
    edit(store, at, other_bytes)
    after = store.read(TABLE, checkpoint.version)
    audit = Audit(TABLE, checkpoint)
    audit.take(after, complete=True)
    anchor = at + (-at % HASH_EVERY)
    whole = verify_events(TABLE, store.read(TABLE)).finding
    assert audit.finding is not None and whole is not None
    assert audit.finding.version == whole.version == anchor
    assert audit.finding.since is not None and checkpoint.version < audit.finding.since <= at

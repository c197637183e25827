"""Streams an older release stored (``tests/fixtures/streams/``, made by
``tests/fixtures/make_streams.py`` at commit 4a6e5dd) still read today: they load into a
fresh store with the same hash chain, decode, fold through the table aggregate, verify
(hash chain, deal commitments, every command re-decided by today's rules), and project
into the very documents the projections made of them when they were written."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import fakeredis
import msgspec
import pytest

from domain.codec import decode_event
from domain.mighty.events import HandDealt, HandScored
from domain.mighty.handfile import parse, replay
from domain.mighty.state import Finished
from domain.table import evolve, initial_state
from services.audit import export_hand, verify_events
from services.audit.verify import check_chain
from services.commands.tables import table_handler
from services.store.base import (
    EMPTY_HEAD,
    GENESIS,
    HASH_EVERY,
    HASH_V1,
    HASH_VERSION,
    Head,
    StoredEvent,
    event_hash,
    verify_chain,
)
from services.store.compact import pack
from services.store.errors import StoreCorrupt
from services.store.redis_store import RedisEventStore
from tests.fixtures.make_streams import projection_docs

STREAMS = Path(__file__).resolve().parents[1] / "fixtures" / "streams"
NAMES = sorted(p.name.removesuffix(".jsonl") for p in STREAMS.glob("*.jsonl"))


def stored_stream(name: str) -> list[StoredEvent]:
    lines = (STREAMS / f"{name}.jsonl").read_bytes().splitlines()
    entries = [msgspec.json.decode(line) for line in lines]
    return [StoredEvent(version=e["version"], data=e["data"].encode(), hash=e["hash"],
                        prev_hash=e["prev_hash"], command_id=e["command_id"]) for e in entries]


def table_of(name: str) -> str:
    return f"fixture-{name}"


def test_the_fixture_holds_every_table_size_and_the_events_whose_facts_were_derived() -> None:
    assert {"mighty-3", "mighty-3-short", "mighty-4-short", "mighty-5", "mighty-5-declared",
            "mighty-6", "mighty-8", "mitigati"} <= set(NAMES)
    kinds: Counter[str] = Counter()
    for name in NAMES:
        for entry in stored_stream(name):
            event = json.loads(entry.data)
            kind = event["type"]
            if kind == "card_played" and event.get("joker_call"):
                kind = "joker_call_lead"
            if kind == "friend_called" and event["call"] != "card":
                kind = f"friend_called_{event['call']}"
            kinds[kind] += 1
    for kind in ("joker_call_lead", "friend_called", "friend_called_first_trick", "friend_called_none",
                 "friend_revealed", "declarer_alone", "kitty_exchanged", "mitigati_card_played"):
        assert kinds[kind], kind


@pytest.mark.parametrize("name", NAMES)
def test_a_stored_stream_verifies(name: str) -> None:
    verdict = verify_events(table_of(name), stored_stream(name))
    assert verdict.finding is None and verdict.events == len(stored_stream(name))


@pytest.mark.parametrize("name", NAMES)
def test_a_stored_stream_appended_again_gets_the_same_events_on_a_version_2_chain(name: str) -> None:
    """Appended command by command into an empty store, the bytes get the same versions
    and command ids; today's appends chain them with hash version 2 (the command id
    inside the hash), so the hashes differ from the old ones and the new chain verifies;
    the handler then folds the table from the store to where the stream ends."""
    stored = stored_stream(name)
    store = RedisEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2))
    table_id = table_of(name)
    head = EMPTY_HEAD
    group: list[StoredEvent] = []
    for entry in [*stored, None]:
        if group and (entry is None or entry.command_id != group[0].command_id):
            appended = store.append(table_id, [e.data for e in group], expected=head,
                                    command_id=group[0].command_id, outcome=b"ok")
            head = appended.head
            group = []
        if entry is not None:
            group.append(entry)
    again = store.read(table_id)
    assert [(e.version, e.data, e.command_id) for e in again] == [
        (e.version, e.data, e.command_id) for e in stored]
    assert {e.hash_version for e in again} == {HASH_VERSION} and {e.hash_version for e in stored} == {HASH_V1}
    assert verify_chain(EMPTY_HEAD, again) == head != Head(stored[-1].version, stored[-1].hash)
    assert verify_events(table_id, again).finding is None
    state, version = table_handler(store).state_of(table_id)
    folded = initial_state(table_id)
    for entry in stored:
        folded = evolve(folded, decode_event(entry.data))
    assert version == len(stored) and state == folded and state.status == "closed"


@pytest.mark.parametrize("name", NAMES)
def test_a_stored_stream_as_redis_holds_it_reads_back_as_version_1_and_takes_version_2_appends(
        name: str) -> None:
    """The upgrade itself: the entries as the older release wrote them into Redis (no
    ``hv`` field) read back unchanged with hash version 1 and verify; the next append
    chains a version-2 event onto the version-1 head, and the whole verifies; so does the
    stream once later appends have stored only their anchors' hashes, read whole or from
    any version."""
    stored = stored_stream(name)
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2)
    store = RedisEventStore(client)
    table_id = table_of(name)
    keys = store.keys.table(table_id)
    for e in stored:
        client.xadd(keys.events, {"v": e.version, "e": e.data, "h": e.hash, "p": e.prev_hash,
                                  "c": e.command_id}, id=f"0-{e.version}")
    client.hset(keys.meta, mapping={"v": stored[-1].version, "h": stored[-1].hash})
    assert store.read(table_id) == stored
    head = Head(stored[-1].version, stored[-1].hash)
    appended = store.append(table_id, [b'{"type":"x"}'], expected=head, command_id="after-upgrade",
                            outcome=b"ok")
    both = store.read(table_id)
    assert [e.hash_version for e in both[-2:]] == [HASH_V1, HASH_VERSION]
    assert verify_chain(EMPTY_HEAD, both) == appended.head == store.head(table_id)
    for n in range(3):  # on past two anchors: today's entries store only theirs
        appended = store.append(table_id, [b'{"type":"x%d"}' % i for i in range(12)], expected=appended.head,
                                command_id=f"after-upgrade-{n}", outcome=b"ok")
    mixed = store.read(table_id)
    assert mixed[:len(stored)] == stored and all(e.hash_stored for e in mixed[:len(stored)])
    assert [e.version for e in mixed[len(stored):] if e.hash_stored] == [
        v for v in range(len(stored) + 1, len(mixed) + 1) if v % HASH_EVERY == 0]
    assert verify_chain(EMPTY_HEAD, mixed) == appended.head == store.head(table_id)
    assert check_chain(mixed) is None
    for after in range(len(stored) - 20, len(mixed) + 1):
        assert store.read(table_id, after) == mixed[after:], after


def _as_redis_holds_it(name: str, link_of: dict[int, str] | None = None) -> RedisEventStore:
    """The stream's entries as the older release wrote them into Redis (with ``p``),
    the links of ``link_of``'s versions replaced."""
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2)
    store = RedisEventStore(client)
    keys = store.keys.table(table_of(name))
    for e in stored_stream(name):
        link = (link_of or {}).get(e.version, e.prev_hash)
        client.xadd(keys.events, {"v": e.version, "e": e.data, "h": e.hash, "p": link, "c": e.command_id},
                    id=f"0-{e.version}")
    return store


@pytest.mark.parametrize("name", ["mighty-5", "mitigati"])
def test_a_stored_stream_whose_stored_link_was_forged_fails_verify_at_that_entry(name: str) -> None:
    """An older entry keeps its stored previous hash (``p``): a link forged with every hash
    left as it was still fails the chain check, at that entry, also in a read from the
    middle (whose first entry's link is checked against the entry before)."""
    stored = stored_stream(name)
    version = len(stored) // 2
    store = _as_redis_holds_it(name, {version: stored[version - 3].hash})
    read = store.read(table_of(name))
    assert [e.hash for e in read] == [e.hash for e in stored]
    finding = verify_events(table_of(name), read).finding
    assert finding is not None and finding.version == version
    assert "previous-hash link" in finding.problem
    with pytest.raises(StoreCorrupt, match=f"event {version} does not follow"):
        verify_chain(Head(version - 1, stored[version - 2].hash), store.read(table_of(name), version - 1))
    assert verify_events(table_of(name), _as_redis_holds_it(name).read(table_of(name))).finding is None


@pytest.mark.parametrize("name", NAMES)
def test_a_stored_stream_projects_into_the_documents_it_made_when_written(name: str) -> None:
    expected = json.loads((STREAMS / f"{name}.docs.json").read_text())
    assert projection_docs(table_of(name), stored_stream(name)) == expected


@pytest.mark.parametrize("name", [n for n in NAMES if n != "mitigati"])
def test_each_stored_hand_exports_to_a_hand_file_that_replays_to_its_score(name: str) -> None:
    """Two calls made by one command export as one call_friend of two (docs/rules/mighty.md §10.4, item 3)."""
    stored = stored_stream(name)
    scored = [decode_event(e.data) for e in stored]
    scores = [e.scores for e in scored if isinstance(e, HandScored)]
    dealt = [e.hand_no for e in scored if isinstance(e, HandDealt)]
    replayed = []
    for hand_no in dealt:
        document = export_hand(table_of(name), stored, hand_no)
        outcome = replay(*parse(msgspec.json.encode(document)))
        assert outcome.rejected is None, (hand_no, outcome.rejected)
        if isinstance(outcome.state, Finished):
            replayed.append(outcome.state.scored.scores)
    assert replayed == scores


@pytest.mark.parametrize("name", ["mighty-5", "mitigati"])
def test_a_stream_of_the_six_field_layout_takes_record_appends_and_verifies_whole(name: str) -> None:
    """A table the release before stored (six fields ``hv v e h c a``, the hash on the
    anchors only: docs/store.md, "The stored entry") appended to by this one, whose entries
    are records: the stream holds both, reads whole and from every version as the whole
    read's tail (command ids and times too), and verifies whole."""
    stored = stored_stream(name)
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2)
    store = RedisEventStore(client)
    table_id = table_of(name)
    keys = store.keys.table(table_id)
    prev = GENESIS
    for e in stored:  # as the release before wrote them, on a version-2 chain
        prev = event_hash(prev, e.data, e.command_id)
        client.xadd(keys.events, {"hv": 2, "v": e.version, "e": pack(e.data),
                                  "h": bytes.fromhex(prev) if e.version % HASH_EVERY == 0 else b"",
                                  "c": e.command_id, "a": 1_796_000_000_000 + e.version}, id=f"0-{e.version}")
    client.hset(keys.meta, mapping={"v": stored[-1].version, "h": prev})
    head = Head(stored[-1].version, prev)
    for n, size in enumerate((1, 5, 17, 2)):
        head = store.append(table_id, [b'{"type":"x%d"}' % i for i in range(size)], expected=head,
                            command_id=f"after-upgrade-{n}", outcome=b"ok").head
    raw = client.xrange(keys.events)
    assert all(b"hv" in f for _, f in raw[:len(stored)]) and all(list(f) == [b"r"] for _, f in raw[len(stored):])
    mixed = store.read(table_id)
    assert [e.command_id for e in mixed[:len(stored)]] == [e.command_id for e in stored]
    assert [e.command_id for e in mixed[len(stored):]] == [f"after-upgrade-{n}" for n, size in enumerate((1, 5, 17, 2))
                                                           for _ in range(size)]
    assert [e.at_ms for e in mixed[:3]] == [1_796_000_000_001, 1_796_000_000_002, 1_796_000_000_003]
    assert verify_chain(EMPTY_HEAD, mixed) == head == store.head(table_id)
    assert check_chain(mixed) is None
    for after in range(len(mixed) + 1):
        assert store.read(table_id, after) == mixed[after:], after

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
from services.commands.tables import table_handler
from services.store.base import EMPTY_HEAD, Head, StoredEvent
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
def test_a_stored_stream_loads_into_a_fresh_store_with_the_same_chain(name: str) -> None:
    """Appended command by command into an empty store, the bytes chain to the same
    hashes; the handler then folds the table from the store to where the stream ends."""
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
    assert store.read(table_id) == stored and head == Head(stored[-1].version, stored[-1].hash)
    state, version = table_handler(store).state_of(table_id)
    folded = initial_state(table_id)
    for entry in stored:
        folded = evolve(folded, decode_event(entry.data))
    assert version == len(stored) and state == folded and state.status == "closed"


@pytest.mark.parametrize("name", NAMES)
def test_a_stored_stream_projects_into_the_documents_it_made_when_written(name: str) -> None:
    expected = json.loads((STREAMS / f"{name}.docs.json").read_text())
    assert projection_docs(table_of(name), stored_stream(name)) == expected


@pytest.mark.parametrize("name", [n for n in NAMES if n != "mitigati"])
def test_each_stored_hand_exports_to_a_hand_file_that_replays_to_its_score(name: str) -> None:
    """Two calls made by one command export as one call_friend of two (mighty-large.md §4.3)."""
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

"""A command id sent again once the idempotency window has forgotten it is a new command:
every reader that splits a stream into commands (verify's replay, the checkpointed audit,
the hand-file export) splits it by command id *and* append time (``one_append``), so such
a stream verifies and exports as the commands it holds."""

from __future__ import annotations

import random
import time
from typing import Any

import fakeredis
import msgspec

from domain.codec import decode_event
from domain.mighty.events import HandScored
from domain.mighty.handfile import output_of, parse, replay
from domain.table import CreateTable, JoinSeat, Submission
from services.audit import export_hand, verify_events
from services.audit.checkpoint import Audit
from services.commands.tables import table_handler
from services.players import next_submission, seating
from services.store.base import StoredEvent, one_append
from services.store.redis_store import RedisEventStore

TABLE = "t1"


def _forget_command_ids(client: fakeredis.FakeRedis, store: RedisEventStore) -> None:
    keys = store.keys.table(TABLE)
    client.delete(keys.commands, keys.previous_commands)  # as when the window has passed
    time.sleep(0.002)  # the next append's time differs from the last one's


def test_a_command_id_sent_again_after_the_window_verifies_as_a_command_of_its_own() -> None:
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2)
    store = RedisEventStore(client)
    handler = table_handler(store)
    handler.handle(TABLE, Submission(CreateTable(), "p0"), command_id="c0")
    handler.handle(TABLE, Submission(JoinSeat(seat=0), "p0"), command_id="join")
    _forget_command_ids(client, store)
    result = handler.handle(TABLE, Submission(JoinSeat(seat=1), "p1"), command_id="join")
    assert not result.duplicate, "a new command, appended"
    stored = store.read(TABLE)
    assert stored[-1].command_id == stored[-2].command_id == "join"
    verdict = verify_events(TABLE, stored, store.head(TABLE))
    assert verdict.ok, verdict.finding
    audit = Audit(TABLE)
    audit.take(stored, complete=True)
    assert audit.finding is None, audit.finding


def test_a_hand_whose_moves_reuse_forgotten_ids_exports_and_replays_to_its_result() -> None:
    """A whole hand where each seat sends every command with its one id, forgotten in
    between: the hand file holds every command and replays to the stored result (a run of
    two commands taken for one would not)."""
    client, store, handler = _seated_table()
    rng = random.Random(3)
    while (table := handler.cached(TABLE)) is not None and (move := next_submission(table[0], rng)) is not None:
        _forget_command_ids(client, store)
        handler.handle(TABLE, move, command_id=f"move-{move.player}")
    stored = store.read(TABLE)
    assert verify_events(TABLE, stored, store.head(TABLE)).ok
    document = export_hand(TABLE, stored, 0)
    outcome = replay(*parse(msgspec.json.encode(document)))
    assert outcome.rejected is None
    scored = [e for e in (decode_event(s.data) for s in stored) if isinstance(e, HandScored)]
    assert output_of(outcome)["result"].get("scores") == list(scored[0].scores)


def test_events_of_one_append_share_id_and_time_and_older_entries_group_by_id() -> None:
    a = StoredEvent(1, b"{}", "h1", "h0", "c1", 2, 1000)
    assert one_append(a, StoredEvent(2, b"{}", "h2", "h1", "c1", 2, 1000))
    assert not one_append(a, StoredEvent(2, b"{}", "h2", "h1", "c1", 2, 1001)), "the id sent again later"
    assert not one_append(a, StoredEvent(2, b"{}", "h2", "h1", "c2", 2, 1000))
    assert one_append(StoredEvent(1, b"{}", "h1", "h0", "c1", 2, None), StoredEvent(2, b"{}", "h2", "h1", "c1"))


def test_an_event_that_does_not_decode_is_named_by_its_own_version_not_its_commands_first() -> None:
    """One command may append several events (a card that ends a trick: the card, then the
    trick won): verify's replay and the checkpointed audit name the event that does not
    decode, not the first event of its command."""
    from dataclasses import replace

    from services.audit.verify import check_replay

    _, store, handler = _seated_table()
    rng = random.Random(3)
    n = 0
    while not any(len(group) > 1 for group in _groups(store.read(TABLE))):
        move = next_submission(handler.state_of(TABLE)[0], rng)
        assert move is not None
        handler.handle(TABLE, move, command_id=f"m{n}")
        n += 1
    stored = store.read(TABLE)
    second = next(group[1] for group in _groups(stored) if len(group) > 1)
    broken = [replace(e, data=b'{"type":') if e.version == second.version else e for e in stored]
    finding = check_replay(TABLE, broken)
    assert finding is not None and finding.version == second.version, finding
    audit = Audit(TABLE)
    audit.take(broken, complete=True)
    assert audit.finding is not None and audit.finding.version == second.version, audit.finding


def _groups(stored: list[StoredEvent]) -> list[list[StoredEvent]]:
    from services.audit.verify import command_groups

    return list(command_groups(stored))


def _seated_table() -> tuple[fakeredis.FakeRedis, RedisEventStore, Any]:
    """A mighty-5 table of one hand, its five seats taken, in a store of its own."""
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2)
    store = RedisEventStore(client)
    handler = table_handler(store)
    names = [f"p{i}" for i in range(5)]
    handler.handle(TABLE, Submission(CreateTable(variant="mighty-5", hands=1), names[0]), command_id="create")
    for n, submission in enumerate(seating(names)):
        handler.handle(TABLE, submission, command_id=f"seat{n}")
    return client, store, handler

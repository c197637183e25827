"""Redis Cluster's rule, checked on every command the service sends: a script, a MULTI
and a multi-key command name keys of one slot (``redis.crc.key_slot``, as Redis and
redis-py compute it). A client that checks each command before fakeredis runs it plays
tables, runs every projection kind, a rebuild, the timer and archive workers' scripts
and transactions; the hand-packed append is checked on its key list."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import fakeredis
import pytest
import redis.client

from domain.table import CloseTable, CreateTable, Submission
from projections import KINDS
from projections.turns import decode_turn
from services.archive.postgres import ChatRow
from services.archive.summary import HandRow, TableRow
from services.archive.worker import ArchiveWorker
from services.bootstrap import Wiring, wire
from services.bots.timers import TimerWorker
from services.bots.worker import turn_channels
from services.players import next_submission, seating
from services.projection.rater import Rater
from services.projection.rebuild import check, rebuild, reset
from services.settings import Settings
from services.store.base import EMPTY_HEAD, StoredEvent
from services.store.cluster import same_slot, slot_of
from services.store.keys import KeySpace, fence_of
from services.store.redis_store import append_call, idempotency_ms

# Commands whose every argument after the name is a key (those the service sends).
_ALL_KEYS = {"MGET", "DEL", "UNLINK", "EXISTS", "WATCH", "TOUCH"}


def keys_of(args: Sequence[Any]) -> list[Any]:
    """The keys of a command that may name several (one-key commands: one slot anyway)."""
    words = [a.decode(errors="replace") if isinstance(a, bytes) else str(a) for a in args]  # a value: MessagePack
    name = words[0].upper()
    if name in ("EVAL", "EVALSHA"):
        return list(args[3:3 + int(args[2])])
    if name in ("XREAD", "XREADGROUP"):
        after = [w.upper() for w in words].index("STREAMS") + 1
        streams = list(args[after:])
        return streams[:len(streams) // 2]
    if name in _ALL_KEYS:
        return list(args[1:])
    if name == "MSET":
        return list(args[1::2])
    return []


class CrossSlot(AssertionError):
    pass


def check_one_slot(keys: Sequence[Any], what: Any) -> None:
    if not same_slot(keys):
        raise CrossSlot(f"{what!r} touches slots {sorted({slot_of(k) for k in keys})}: {list(keys)}")


class SlotCheckedPipeline(redis.client.Pipeline):
    """Each command checked; a transaction's commands (and what it WATCHes) together."""

    def immediate_execute_command(self, *args: Any, **options: Any) -> Any:
        check_one_slot(keys_of(args), args[:3])
        self.watched_keys = [*getattr(self, "watched_keys", []), *keys_of(args)]
        return super().immediate_execute_command(*args, **options)

    def pipeline_execute_command(self, *args: Any, **options: Any) -> Any:
        check_one_slot(keys_of(args), args[:3])
        return super().pipeline_execute_command(*args, **options)

    def execute(self, raise_on_error: bool = True) -> Any:
        if self.transaction or self.explicit_transaction:
            every = list(getattr(self, "watched_keys", []))
            for command in self.command_stack:
                args = command[0]
                every += keys_of(args) or ([args[1]] if len(args) > 1 and str(args[0]).upper()
                                           not in ("MULTI", "EXEC") else [])
            check_one_slot(every, "a MULTI")
        self.watched_keys = []
        return super().execute(raise_on_error)


class SlotCheckedRedis(fakeredis.FakeRedis):
    def execute_command(self, *args: Any, **options: Any) -> Any:
        check_one_slot(keys_of(args), args[:3])
        return super().execute_command(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        return SlotCheckedPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)


class FakeArchive:
    """What the archive worker asks of PostgreSQL, in memory."""

    def __init__(self) -> None:
        self.events: dict[str, list[StoredEvent]] = {}
        self.said: dict[str, list[ChatRow]] = {}

    def write(self, table: TableRow, events: Sequence[StoredEvent], hands: Sequence[HandRow],
              chat: Sequence[ChatRow] = ()) -> None:
        self.events[table.table_id] = list(events)
        self.said[table.table_id] = list(chat)

    def chat(self, table_id: str, after: str | None = None, count: int | None = None) -> list[tuple[str, bytes]]:
        return [(row.message_id, row.data) for row in self.said.get(table_id, [])]

    def read(self, table_id: str, after_version: int = 0, to_version: int | None = None) -> list[StoredEvent]:
        return [e for e in self.events.get(table_id, []) if after_version < e.version
                and (to_version is None or e.version <= to_version)]


def play(wiring: Wiring, tables: int, rng: random.Random, close: bool) -> list[str]:
    """Tables played some steps each through the handler (seeded random players); with
    ``close``, a whole hand each and then closed."""
    ids = [f"slot{i:02d}" for i in range(tables)]
    for table_id in ids:
        players = [f"p{table_id}{seat}" for seat in range(5)]
        wiring.handler.handle(table_id, Submission(CreateTable(variant="mighty-5"), players[0]),
                              command_id=f"{table_id}-create")
        for n, submission in enumerate(seating(players)):
            wiring.handler.handle(table_id, submission, command_id=f"{table_id}-seat{n}")
        for step in range(1000 if close else 12):
            state, _ = wiring.handler.state_of(table_id)
            move = next_submission(state, rng)
            if move is None or (close and state.hands_scored):
                break
            wiring.handler.handle(table_id, move, command_id=f"{table_id}-step{step}")
        if close:
            wiring.handler.handle(table_id, Submission(CloseTable(reason="done")), command_id=f"{table_id}-close")
    return ids


def caught_up(wiring: Wiring) -> None:
    """Every kind's worker, its store on the cluster's code paths, until it has applied
    the feeds (a cluster polls each partition's feed rather than one XREADGROUP)."""
    for kind in KINDS:
        store = wiring.projection_store(kind)
        store.cluster = True
        worker = wiring.worker(kind, linger_ms=0, block_ms=1)
        positions = wiring.readers.feed_positions()
        for _ in range(200):
            worker.step()
            if all(store.checkpoint(p).id == at for p, at in positions.items() if at != "0-0"):
                break
        worker.shutdown()
    rater = Rater(wiring.client, wiring.space)  # and the rater every hand (the archive waits for it)
    wiring.client.set(rater.keys.lease, rater.token, px=5000)
    while rater.step():
        pass
    rater.release()


@pytest.fixture
def wiring() -> Wiring:
    client = SlotCheckedRedis(server=fakeredis.FakeServer(), protocol=2)
    return wire(client, Settings(partitions=8, namespace="slots"))


def test_the_checking_client_catches_a_command_across_two_slots(wiring: Wiring) -> None:
    with pytest.raises(CrossSlot):
        wiring.client.mget(["slots:{p00}:a", "slots:{p01}:a"])
    with pytest.raises(CrossSlot):
        pipe = wiring.client.pipeline(transaction=True)
        pipe.set("slots:{p00}:a", 1)
        pipe.set("slots:{p01}:a", 1)
        pipe.execute()
    wiring.client.mget(["slots:{p03}:a", "slots:{p03}:b"])  # one slot: fine


@pytest.mark.parametrize("window_s", [0.0, 3600.0])
def test_an_append_and_its_replication_fence_touch_one_slot(window_s: float) -> None:
    space = KeySpace(partitions=16)
    rng = random.Random(7)
    for _ in range(300):
        table_id = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-_") for _ in range(rng.randint(1, 64)))
        keys, _ = append_call(space, table_id, [b"e"], EMPTY_HEAD, "c1", b"o", idempotency_ms(window_s))
        assert len(keys) == 6  # events, meta, cmds, feed, cmdp, the table index: always the 6-key call
        assert same_slot([*keys, fence_of(keys[0])]), keys
        assert slot_of(keys[0]) == slot_of(space.feed(space.partition_of(table_id)))


def test_the_partitions_hash_to_distinct_slots_spread_over_a_three_primary_cluster() -> None:
    space = KeySpace(partitions=16)
    slots = [slot_of(space.feed(p)) for p in range(16)]
    assert len(set(slots)) == 16
    thirds = {slot * 3 // 16384 for slot in slots}  # redis-cli gives each primary a third
    assert thirds == {0, 1, 2}


def test_playing_projecting_and_rebuilding_never_crosses_a_slot(wiring: Wiring) -> None:
    play(wiring, 6, random.Random(3), close=False)
    caught_up(wiring)
    for kind in KINDS:
        store = wiring.projection_store(kind)
        for partition in range(wiring.space.partitions):
            assert check(store, partition, events=wiring.store) == []
        rebuild(store, 0, events=wiring.store)
        reset(store, 1)
    assert wiring.readers.lobby() and wiring.readers.lag("views")


def test_the_timer_scripts_touch_one_slot(wiring: Wiring) -> None:
    play(wiring, 2, random.Random(5), close=False)
    caught_up(wiring)
    timers = TimerWorker(wiring.client, wiring.space, wiring.handler)
    turns = [decode_turn(bytes(data)) for channel in turn_channels(wiring.space)
             for data in wiring.client.hvals(channel)]
    assert turns
    for turn in turns:
        timers.handle(msgspec_replace(turn, turn_seconds=1))
        timers._fire(turn.table_id)  # noqa: SLF001 - what the worker does once it is due
    timers.idle()


def test_archiving_a_table_touches_one_slot(wiring: Wiring) -> None:
    ids = play(wiring, 3, random.Random(11), close=True)
    caught_up(wiring)
    chat = wiring.space.table(ids[0]).chat  # a table's chat goes with it, in the same MULTI
    wiring.client.xadd(chat, {"m": b'{"player":"p","name":"Ana","text":"gg"}'})
    archive = FakeArchive()
    worker = ArchiveWorker(wiring.store, archive, after_s=0)  # type: ignore[arg-type]
    report = worker.run_once()
    assert sorted(report.archived) == ids, report.as_dict()
    assert [data for _, data in archive.chat(ids[0])] == [b'{"player":"p","name":"Ana","text":"gg"}']
    assert not wiring.client.exists(chat)


def msgspec_replace(turn: Any, **changes: Any) -> Any:
    import msgspec

    return msgspec.structs.replace(turn, **changes)

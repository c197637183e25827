"""Projection workers against a real redis-server (started by the fixtures): crash and
take-over, two workers of a kind, redelivery, a lost group, what notifications carry,
the ledger's arithmetic, and the demo with no Redis at all."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from domain.codec import decode_event
from domain.table import TableState, evolve, initial_state
from projections import KINDS
from projections.docs import decode, is_msgpack
from projections.ledger import decode_table
from projections.views import SPECTATOR
from services.projection.keys import ProjectionKeys
from services.projection.notify import channel_of
from services.projection.read import (
    feed_positions,
    lag,
    player_ledgers,
    table_ledger,
    view,
    wait_until,
)
from services.projection.rebuild import check, rebuild
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore, connect
from tests.integration.conftest import config_set_everywhere
from tests.integration.workers.support import (
    Tables,
    applied,
    assert_identical_to_a_rebuild,
    feed_length,
    in_process_worker,
    read_not_applied,
    scored_hands,
    start_worker,
    store_of,
    wait_for,
    wait_ready,
    workers,
)
from tests.unit.test_projections import assert_reader_may_see

pytestmark = pytest.mark.integration
SPACE = KeySpace(16)


def ids(prefix: str, count: int) -> list[str]:
    return [f"{prefix}{i:03d}" for i in range(count)]


def test_a_worker_killed_mid_batch_is_replaced_and_the_result_equals_a_rebuild(redis_server: Any, redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=1)
    table_ids = ids("k", 12)
    tables.open(table_ids)
    tables.play(hands=2)  # a backlog: the workers start behind
    total = feed_length(redis_client, SPACE)
    for kind in KINDS:
        process = start_worker(redis_server.url, kind, "--batch", "5", "--linger-ms", "0")
        wait_for(lambda k=kind: applied(redis_client, SPACE, k) > total // 4, what=f"{kind} to start")
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert applied(redis_client, SPACE, kind) < total, "killed before the end"
        # a kill between a read and its apply leaves nothing behind: a read writes nothing

    with workers(redis_server.url):
        tables.play(hands=3)  # and the tables go on meanwhile
        for kind in KINDS:
            wait_until(redis_client, SPACE, kind, timeout_s=60)
    assert_identical_to_a_rebuild(redis_client, SPACE)
    for table_id, hands in scored_hands(redis_client, SPACE, table_ids).items():
        ledger = table_ledger(redis_client, SPACE, table_id)
        assert ledger is not None
        assert [line.scores for line in ledger.hands] == [h.scores for h in hands], "no hand twice, none missed"
    assert all(read_not_applied(redis_client, SPACE, k) == 0 for k in KINDS)


def test_workers_ride_out_a_redis_restart_and_converge_on_a_rebuild(
    redis_factory: Any, tmp_path: Path
) -> None:
    server = redis_factory(appendonly=True, appendfsync="always")
    client = connect(server.url)
    tables = Tables(client, SPACE, seed=9)
    table_ids = ids("o", 8)
    tables.open(table_ids)
    logs = {kind: tmp_path / f"{kind}.log" for kind in KINDS}
    processes = [start_worker(server.url, kind, logs=logs[kind]) for kind in KINDS]
    try:
        wait_ready(client, SPACE, KINDS)
        tables.play(hands=1)
        server.kill(signal.SIGKILL)
        for kind in KINDS:  # each worker meets the outage (past its client's own retries)
            wait_for(lambda k=kind: "redis unreachable" in logs[k].read_text(), 60, f"{kind} to meet the outage")
        time.sleep(0.5)
        assert all(p.poll() is None for p in processes), "no worker died with Redis"
        server.start()  # same dir, port and AOF
        tables.play(hands=2)
        for kind in KINDS:
            wait_until(client, SPACE, kind, timeout_s=60, check=lambda: _alive(processes))
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=15)
    assert all(p.returncode == 0 for p in processes), "a clean stop after the outage"
    for kind in KINDS:
        events = [json.loads(line)["event"] for line in logs[kind].read_text().splitlines() if line.startswith("{")]
        assert "redis unreachable" in events and "redis reachable again" in events, kind
    assert_identical_to_a_rebuild(client, SPACE)
    for table_id, hands in scored_hands(client, SPACE, table_ids).items():
        ledger = table_ledger(client, SPACE, table_id)
        assert ledger is not None and len(hands) == 2
        assert [line.scores for line in ledger.hands] == [h.scores for h in hands], "no hand twice, none missed"


def test_a_worker_started_while_redis_is_down_waits_for_it(redis_server: Any, tmp_path: Path) -> None:
    redis_server.kill(signal.SIGKILL)
    log = tmp_path / "views.log"
    process = start_worker(redis_server.url, "views", logs=log)
    try:
        wait_for(lambda: "redis unreachable" in log.read_text(), 60, "the worker to meet the outage")
        time.sleep(0.5)
        assert process.poll() is None, "the worker waits, it does not exit"
        redis_server.start()
        client = connect(redis_server.url)
        tables = Tables(client, SPACE, seed=10)
        tables.open(ids("w", 4))
        tables.play(hands=1)
        wait_until(client, SPACE, "views", timeout_s=60, check=lambda: _alive([process]))
    finally:
        process.terminate()
        process.wait(timeout=15)
    assert process.returncode == 0
    events = [json.loads(line)["event"] for line in log.read_text().splitlines() if line.startswith("{")]
    assert events.count("redis unreachable") == 1 and "redis reachable again" in events


def test_a_worker_rides_out_a_redis_that_refuses_writes(redis_server: Any, redis_client: Any, tmp_path: Path) -> None:
    tables = Tables(redis_client, SPACE, seed=12)
    tables.open(ids("m", 4))
    tables.play(hands=1)  # a backlog the worker will fail to store
    log = tmp_path / "ledger.log"
    config_set_everywhere(redis_client, "maxmemory", 1)  # noeviction: every write is refused now
    process = start_worker(redis_server.url, "ledger", logs=log)
    try:
        wait_for(lambda: "redis refused" in log.read_text(), what="the worker to meet the refusal")
        time.sleep(0.5)
        assert process.poll() is None, "the worker is still there"
        assert applied(redis_client, SPACE, "ledger") == 0
        config_set_everywhere(redis_client, "maxmemory", 0)
        wait_until(redis_client, SPACE, "ledger", timeout_s=60, check=lambda: _alive([process]))
    finally:
        config_set_everywhere(redis_client, "maxmemory", 0)
        process.terminate()
        process.wait(timeout=15)
    assert process.returncode == 0
    assert_identical_to_a_rebuild(redis_client, SPACE, ("ledger",))


def _alive(processes: list[subprocess.Popen[bytes]]) -> None:
    dead = [p.args for p in processes if p.poll() is not None]
    assert not dead, f"worker died: {dead}"


def test_two_workers_of_one_kind_share_the_partitions_and_never_apply_an_entry_twice(
    redis_server: Any, redis_client: Any
) -> None:
    tables = Tables(redis_client, SPACE, seed=2)
    tables.open(ids("d", 16))
    kinds = ("views", "ledger")
    with workers(redis_server.url, kinds * 2, "--batch", "50") as processes:
        for kind in kinds:
            live = ProjectionKeys(SPACE, kind).workers()
            wait_for(lambda k=live: redis_client.zcard(k) == 2, what="both workers to be up")
        tables.play(hands=2)
        for kind in kinds:
            wait_until(redis_client, SPACE, kind, timeout_s=60)
    assert all(p.returncode in (0, -signal.SIGTERM) for p in processes)
    for kind in kinds:
        store = store_of(redis_client, SPACE, kind)
        for partition in range(SPACE.partitions):
            # the script counts an entry only when it applies it: once per entry, exactly
            assert store.checkpoint(partition).count == redis_client.xlen(SPACE.feed(partition))
        stats = [msgspec.json.decode(redis_client.get(k)) for k in redis_client.scan_iter(
            match=ProjectionKeys(SPACE, kind).stats("*"))]
        assert len(stats) == 2 and all(s["events"] > 0 for s in stats), "both workers took part"
        assert sum(s["events"] for s in stats) == feed_length(redis_client, SPACE)
    assert_identical_to_a_rebuild(redis_client, SPACE, kinds)


def test_a_redelivered_entry_changes_nothing(redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=3)
    tables.open(ids("r", 6))
    tables.play(hands=1)
    first = in_process_worker(redis_client, "ledger", SPACE, linger_ms=0, block_ms=10)
    while applied(redis_client, SPACE, "ledger") < feed_length(redis_client, SPACE):
        first.step()
    store = store_of(redis_client, SPACE, "ledger")
    before = {p: (store.checkpoint(p), store.docs(p)) for p in range(SPACE.partitions)}
    first.shutdown()
    keys = ProjectionKeys(SPACE, "ledger")
    for partition in range(SPACE.partitions):  # deliver every entry once more
        redis_client.xgroup_setid(keys.feed(partition), keys.group, "0-0")
    again = in_process_worker(redis_client, "ledger", SPACE, linger_ms=0, block_ms=10)
    for _ in range(20):
        again.step()
    again.shutdown()
    assert {p: (store.checkpoint(p), store.docs(p)) for p in range(SPACE.partitions)} == before


def test_a_lost_consumer_group_comes_back_at_the_stored_checkpoint(redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=4)
    table_ids = ids("g", 8)
    tables.open(table_ids)
    worker = in_process_worker(redis_client, "directory", SPACE, linger_ms=0, block_ms=10, group_every_s=0.0)
    while applied(redis_client, SPACE, "directory") < feed_length(redis_client, SPACE):
        worker.step()
    keys = ProjectionKeys(SPACE, "directory")
    partition = SPACE.partition_of(table_ids[0])
    redis_client.xgroup_destroy(keys.feed(partition), keys.group)
    tables.play(hands=1, steps=3)  # the checkpoint moves: the worker sets the group to it
    deadline = time.monotonic() + 10
    while not redis_client.xinfo_groups(keys.feed(partition)):  # NOGROUP: recreated
        assert time.monotonic() < deadline, "the group never came back"
        worker.step()
    checkpoint = store_of(redis_client, SPACE, "directory").checkpoint(partition)
    group = redis_client.xinfo_groups(keys.feed(partition))[0]
    assert group["last-delivered-id"].decode() == checkpoint.id, "at the checkpoint, not at $"
    tables.play(hands=1)
    while applied(redis_client, SPACE, "directory") < feed_length(redis_client, SPACE):
        worker.step()
    worker.shutdown()
    assert_identical_to_a_rebuild(redis_client, SPACE, ("directory",))


def _snapshot(client: Any) -> dict[bytes, tuple[bytes, int]]:
    """Every key with its value (DUMP) and time to live: what an AOF copy would hold."""
    return {key: (client.dump(key), max(0, client.pttl(key))) for key in client.scan_iter(count=1000)}


def _put_back(client: Any, snapshot: dict[bytes, tuple[bytes, int]]) -> None:
    """The store as the snapshot held it: keys made since are gone, the others restored."""
    for key in list(client.scan_iter(count=1000)):
        client.delete(key)
    for key, (value, ttl_ms) in snapshot.items():
        client.restore(key, ttl_ms, value, replace=True)


def test_a_store_that_went_back_under_a_kept_connection_is_taken_again_from_what_it_holds(
    redis_client: Any,
) -> None:
    # Redis restarted on an AOF without its last second, and the worker's connection
    # retried through it: no error reached the worker. The worker would read on past the
    # entries whose batch the store lost; nothing new comes for a quiet partition, so only
    # the stored checkpoint can tell the worker (docs/workers.md).
    tables = Tables(redis_client, SPACE, seed=5)
    tables.open(ids("b", 6))
    worker = in_process_worker(redis_client, "ledger", SPACE, linger_ms=0, block_ms=10)
    while applied(redis_client, SPACE, "ledger") < feed_length(redis_client, SPACE):
        worker.step()
    tables.play(hands=1)
    delivered = worker.read()
    assert sum(len(entries) for _, entries in delivered) > 0
    earlier = _snapshot(redis_client)  # the entries delivered, not yet applied
    worker.process(delivered)
    assert applied(redis_client, SPACE, "ledger") == feed_length(redis_client, SPACE)
    _put_back(redis_client, earlier)
    assert applied(redis_client, SPACE, "ledger") < feed_length(redis_client, SPACE)
    deadline = time.monotonic() + 10
    while applied(redis_client, SPACE, "ledger") < feed_length(redis_client, SPACE):
        assert time.monotonic() < deadline, "the worker never saw the store went back"
        worker.step()
    worker.shutdown()
    assert_identical_to_a_rebuild(redis_client, SPACE, ("ledger",))


def test_entries_gone_from_the_feed_before_they_were_applied_come_back_from_the_table_streams(
        redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=5)
    table_ids = ids("x", 1)
    tables.open(table_ids)
    partition = SPACE.partition_of(table_ids[0])
    keys = ProjectionKeys(SPACE, "directory")
    redis_client.xgroup_create(keys.feed(partition), keys.group, id="0-0")
    read = redis_client.xreadgroup(keys.group, "dead-worker", {keys.feed(partition): ">"}, noack=True)
    entries = read[0][1]
    gone = entries[-1][0].decode()
    redis_client.xdel(keys.feed(partition), gone)  # read, unapplied, and deleted by hand
    worker = in_process_worker(redis_client, "directory", SPACE, linger_ms=0, block_ms=10)
    reported: list[Any] = []
    worker.log = _Recorder(reported, worker.log)
    worker.maintain()  # takes the partitions: sees the hole, rebuilds, sets the group at the rebuilt checkpoint
    assert any("gone from the feed" in event and kw.get("partition") == partition for event, kw in reported)
    assert read_not_applied(redis_client, SPACE, "directory") == 0
    assert store_of(redis_client, SPACE, "directory").checkpoint(partition).count == len(entries)
    assert_identical_to_a_rebuild(redis_client, SPACE, ("directory",))
    worker.shutdown()


class _Recorder:
    def __init__(self, into: list[Any], inner: Any) -> None:
        self.into, self.inner = into, inner

    def __getattr__(self, level: str) -> Any:
        def log(event: str, **kw: Any) -> None:
            self.into.append((event, kw))

        return log


def test_stored_views_and_notifications_hold_only_what_their_reader_may_see(
    redis_server: Any, redis_client: Any
) -> None:
    table_ids = ids("v", 8)
    channels = [channel_of(SPACE, t, r) for t in table_ids for r in [*map(str, range(5)), SPECTATOR]]
    pubsub = redis_client.pubsub(ignore_subscribe_messages=True)
    pubsub.ssubscribe(*channels)
    received: list[bytes] = []
    stop = threading.Event()

    def listen() -> None:
        while not stop.is_set():
            message = pubsub.get_sharded_message(timeout=0.05)
            if message is not None and message["type"] == "smessage":
                received.append(bytes(message["data"]))

    listener = threading.Thread(target=listen)
    listener.start()
    tables = Tables(redis_client, SPACE, seed=6)
    with workers(redis_server.url, ("views",)):
        wait_ready(redis_client, SPACE, ("views",))
        tables.open(table_ids)
        tables.play(hands=3)
        wait_until(redis_client, SPACE, "views", timeout_s=60)
        wait_for(lambda: len(received) >= 6 * len(table_ids), what="notifications")
    stop.set()
    listener.join()
    pubsub.close()

    history = _history(redis_client, table_ids)
    stored = [view(redis_client, SPACE, t, r) for t in table_ids for r in [*map(str, range(5)), SPECTATOR]]
    for doc in [*received, *[d for d in stored if d is not None]]:
        found = decode(doc)
        state, salts = history[found["table_id"]][found["version"]]
        assert_reader_may_see(doc, state, salts)
    versions = {(v["table_id"], v["version"]) for v in map(decode, received)}
    assert len(versions) > 10 * len(table_ids), "notifications all along the hands, not just the last view"


def _history(client: Any, table_ids: list[str]) -> dict[str, dict[int, tuple[TableState, set[str]]]]:
    """Each table's state at every version, with the salts not yet revealed at it."""
    store = RedisEventStore(client, keys=SPACE)
    found: dict[str, dict[int, tuple[TableState, set[str]]]] = {}
    for table_id in table_ids:
        state, found[table_id] = initial_state(table_id), {}
        for stored in store.read(table_id):
            state = evolve(state, decode_event(stored.data))
            found[table_id][stored.version] = (state, {state.salt} if state.salt else set())
    return found


def test_ledgers_add_up_and_every_hand_sums_to_zero(redis_server: Any, redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=7)
    table_ids = ids("l", 10)
    with workers(redis_server.url, ("ledger",)):
        tables.open(table_ids)
        tables.play(hands=3)
        wait_until(redis_client, SPACE, "ledger", timeout_s=60)
    hands = scored_hands(redis_client, SPACE, table_ids)
    for table_id in table_ids:
        ledger = table_ledger(redis_client, SPACE, table_id)
        assert ledger is not None and len(ledger.hands) == 3
        assert all(sum(line.scores) == 0 for line in ledger.hands)
        assert ledger.totals == tuple(sum(h.scores[s] for h in hands[table_id]) for s in range(5))
    players = player_ledgers(redis_client, SPACE)
    assert sum(p.total for p in players) == 0
    for player in players:
        expected = sum(h.scores[s] for t in table_ids for h in hands[t]
                       for s, name in enumerate(tables.states[t][0].seats) if name == player.player)
        assert player.total == expected


def test_a_rebuild_from_the_streams_writes_what_the_workers_stored(redis_server: Any, redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=8)
    with workers(redis_server.url):
        tables.open(ids("b", 6))
        tables.play(hands=1)
        for kind in KINDS:
            wait_until(redis_client, SPACE, kind, timeout_s=60)
    before = {(k, p): store_of(redis_client, SPACE, k).docs(p) for k in KINDS for p in range(SPACE.partitions)}
    redis_client.set(ProjectionKeys(SPACE, "ledger").doc(0, "ledger:t:bogus"), b"stale")
    for kind in KINDS:
        for partition in range(SPACE.partitions):
            rebuild(store_of(redis_client, SPACE, kind), partition)
    after = {(k, p): store_of(redis_client, SPACE, k).docs(p) for k in KINDS for p in range(SPACE.partitions)}
    assert after == before


def test_lag_counts_the_entries_not_yet_applied_and_how_old_the_oldest_is(redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=9)
    tables.open(ids("a", 3))
    behind = lag(redis_client, SPACE, "views")
    assert sum(row.entries for row in behind) == feed_length(redis_client, SPACE)
    assert max(row.ms for row in behind) >= 0
    worker = in_process_worker(redis_client, "views", SPACE, linger_ms=0, block_ms=10)
    positions = feed_positions(redis_client, SPACE)
    while applied(redis_client, SPACE, "views") < feed_length(redis_client, SPACE):
        worker.step()
    wait_until(redis_client, SPACE, "views", positions, timeout_s=5)
    assert all(row.entries == 0 and row.ms == 0 for row in lag(redis_client, SPACE, "views"))
    worker.shutdown()


def test_the_demo_runs_with_no_redis_configured_or_on_the_path(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["PATH"] = str(Path(sys.executable).parent)  # the venv: no redis-server there
    result = subprocess.run([sys.executable, "-m", "services.cli", "demo", "--tables", "2", "--hands", "2", "--json"],
                            env=env, capture_output=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    found = json.loads(result.stdout)
    assert found["hands"] == 4
    assert found["ledger"] and sum(row["total"] for row in found["ledger"]) == 0
    assert b"embedded fake Redis" in result.stderr


def test_a_table_ledger_document_reads_back(redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=11)
    tables.open(["z000"])
    worker = in_process_worker(redis_client, "ledger", SPACE, linger_ms=0, block_ms=10)
    while applied(redis_client, SPACE, "ledger") < feed_length(redis_client, SPACE):
        worker.step()
    worker.shutdown()
    key = ProjectionKeys(SPACE, "ledger").doc(SPACE.partition_of("z000"), "ledger:t:z000")
    assert decode_table(redis_client.get(key)).seats == tables.states["z000"][0].seats


def _catch_up(client: Any, kinds: tuple[str, ...] = KINDS) -> None:
    """A fresh in-process worker of each kind (it restores what is stored), stepped until
    it has applied every feed entry."""
    for kind in kinds:
        worker = in_process_worker(client, kind, SPACE, linger_ms=0, block_ms=10)
        while applied(client, SPACE, kind) < feed_length(client, SPACE):
            worker.step()
        worker.shutdown()


def _store_as_an_earlier_release(client: Any) -> int:
    """Every stored document written again as JSON, as releases before 2026-12-06 stored them."""
    rewritten = 0
    for kind in KINDS:
        store = store_of(client, SPACE, kind)
        for partition in range(SPACE.partitions):
            for doc, data in store.docs(partition).items():
                if not is_msgpack(data):
                    continue  # the turns, the hours' markers: as they were
                key = store.keys.key_of(partition, doc)
                old = msgspec.json.encode(decode(data))
                if doc.field is None:
                    client.set(key, old)
                else:
                    client.hset(key, doc.field, old)
                rewritten += 1
    return rewritten


def test_documents_an_earlier_release_stored_as_json_are_read_and_check_as_the_same(redis_client: Any) -> None:
    """A rolling upgrade: what a release that wrote JSON stored reads on, checks identical
    to a rebuild, and is written as MessagePack the next time its table changes."""
    tables = Tables(redis_client, SPACE, seed=12)
    tables.open(ids("j", 4))
    tables.play(hands=1, steps=30)
    _catch_up(redis_client)
    assert _store_as_an_earlier_release(redis_client) > 4 * 6
    assert_identical_to_a_rebuild(redis_client, SPACE)
    ledger = table_ledger(redis_client, SPACE, "j000")
    assert ledger is not None and ledger.seats == tables.states["j000"][0].seats
    spectator = view(redis_client, SPACE, "j001", SPECTATOR)
    assert spectator is not None and spectator.startswith(b"{")
    assert decode(spectator)["version"] == tables.states["j001"][1]

    tables.play(hands=1)  # the workers restore from the JSON documents, then fold on
    _catch_up(redis_client)
    assert_identical_to_a_rebuild(redis_client, SPACE)
    assert sum(p.total for p in player_ledgers(redis_client, SPACE)) == 0 and player_ledgers(redis_client, SPACE)
    for table_id in tables.states:
        stored = view(redis_client, SPACE, table_id, SPECTATOR)
        assert stored is not None and is_msgpack(stored)
        assert decode(stored)["version"] == tables.states[table_id][1]
    # a JSON document that is not the rebuilt one is still found
    key = ProjectionKeys(SPACE, "ledger").doc(SPACE.partition_of("j002"), "ledger:t:j002")
    redis_client.set(key, msgspec.json.encode({**decode(redis_client.get(key)), "totals": [1, 2, 3, 4, 5]}))
    differences = check(store_of(redis_client, SPACE, "ledger"), SPACE.partition_of("j002"))
    assert [d.doc.name for d in differences] == ["ledger:t:j002"]

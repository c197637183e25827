"""The archive on a real redis-server and a real PostgreSQL (docs/archive.md): closed tables
move into PostgreSQL, what is left in Redis is an index entry, every read still finds
them, and no crash or outage deletes from Redis what PostgreSQL does not safely hold."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import msgspec
import psycopg
import pytest
import redis

from domain.codec import decode_event
from domain.table import CloseTable, CreateTable, Submission
from projections import KINDS
from projections.ledger import decode_table, table_ledger_of
from services import cli
from services.archive.errors import ArchiveConflict, ArchiveUnavailable
from services.archive.migrate import migrations
from services.archive.postgres import PostgresArchive
from services.archive.runtime import start_private_postgres
from services.bootstrap import Wiring, wire
from services.cli.common import EXIT_DIFFERENT
from services.projection.rater import Rater, RatingsKeys, dump, rebuild_ratings
from services.projection.read import caught_up, feed_positions, player_ledgers
from services.redis_runtime import PrivateRedis, free_port
from services.settings import Settings
from services.store.base import StoredEvent
from services.store.keys import KeySpace
from services.store.redis_store import connect
from tests.integration.workers.support import (
    Tables,
    assert_identical_to_a_rebuild,
    in_process_worker,
)
from tests.stream_entries import as_fields, as_stored

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

SPACE = KeySpace(4, namespace="arch")


def settings(archive_url: str | None, after_s: float = 0.0) -> Settings:
    return Settings(namespace=SPACE.namespace, partitions=SPACE.partitions, archive_url=archive_url,
                    archive_after_s=after_s)


@pytest.fixture
def wiring(redis_client: redis.Redis, archive_url: str) -> Iterator[Wiring]:
    wired = wire(redis_client, settings(archive_url))
    assert wired.archive is not None
    wired.archive.migrate()
    yield wired
    wired.archive.close()


def play_tables(client: redis.Redis, closed: list[str], live: list[str] = (), hands: int = 1) -> Tables:  # type: ignore[assignment]
    tables = Tables(client, SPACE, seed=7)
    tables.open([*closed, *live])
    tables.play(hands)
    for table_id in closed:
        tables.send(table_id, Submission(command=CloseTable(reason="over")))
    return tables


def project(client: redis.Redis, rate: bool = True) -> None:
    """Every projection kind applies every feed entry (workers in this process), and the
    rater every hand (``rate``: the archive waits for it)."""
    at = feed_positions(client, SPACE)
    for kind in KINDS:
        worker = in_process_worker(client, kind, SPACE, block_ms=1, linger_ms=0, lease_ms=2000)
        for _ in range(500):
            if caught_up(client, SPACE, kind, at):
                break
            worker.step()
        worker.shutdown()
        assert caught_up(client, SPACE, kind, at), kind
    if rate:
        rater = Rater(client, SPACE)
        client.set(rater.keys.lease, rater.token, px=5000)  # the stopped worker's rater held it
        while rater.step():
            pass
        rater.release()


def table_keys(client: redis.Redis, table_id: str) -> list[str]:
    tag = SPACE.tag(SPACE.partition_of(table_id))
    return sorted(k.decode() for k in client.scan_iter(match=f"{SPACE.namespace}:{tag}:*{table_id}*"))


def run_cli(server: PrivateRedis, archive_url: str | None, *args: str) -> tuple[int, str, str]:
    """``mighty ARGS`` in a process of its own (its logging set up as a command's is)."""
    flags = ["--redis-url", server.url, "--namespace", SPACE.namespace, "--partitions", str(SPACE.partitions)]
    if archive_url:
        flags += ["--archive-url", archive_url]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIGHTY_") and k != "REDIS_URL"}
    done = subprocess.run([sys.executable, "-m", "services.cli", *args, *flags], env=env,
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def test_a_closed_table_moves_to_postgres_leaving_an_index_entry(
        redis_client: redis.Redis, wiring: Wiring) -> None:
    play_tables(redis_client, closed=["done1"], live=["live1"])
    project(redis_client)
    before = wiring.store.read("done1")
    live_before = wiring.store.read("live1")
    ledgers = player_ledgers(redis_client, SPACE)
    assert any(":view:done1:" in key for key in table_keys(redis_client, "done1"))

    report = wiring.archive_worker().run_once()

    assert report.archived == ["done1"]
    left = table_keys(redis_client, "done1")
    assert left == []  # its ledger document too: folded from the archived events when asked
    index = SPACE.namespace + ":" + SPACE.tag(SPACE.partition_of("done1")) + ":archived"
    entry = redis_client.hget(index, "done1")
    assert entry is not None and len(entry) <= 1024
    assert msgspec.json.decode(entry)["version"] == before[-1].version
    assert wiring.store.read("done1") == before  # read through, bytes and hashes as stored
    assert wiring.store.read("done1", 3, 5) == before[3:5]
    assert wiring.store.head("done1").version == before[-1].version
    assert wiring.store.read("live1") == live_before  # a live table is left alone
    assert RedisEventStore_read(wiring, "live1") == live_before
    assert player_ledgers(redis_client, SPACE) == ledgers
    assert "done1" in wiring.store.table_ids() and "live1" in wiring.store.table_ids()
    assert wiring.archive is not None
    assert [h.hand_no for h in wiring.archive.hands("done1")] == [0]
    assert wiring.archive.hands("done1")[0].status == "hand_scored"


def RedisEventStore_read(wiring: Wiring, table_id: str) -> list[StoredEvent]:
    from services.store.redis_store import RedisEventStore

    return RedisEventStore.read(wiring.store, table_id)


def test_verify_export_and_log_read_an_archived_table_from_postgres(
        redis_server: PrivateRedis, redis_client: redis.Redis, wiring: Wiring, archive_url: str) -> None:
    play_tables(redis_client, closed=["done2"], hands=2)
    project(redis_client)
    verified = run_cli(redis_server, archive_url, "verify", "done2")
    exported = run_cli(redis_server, archive_url, "export", "done2", "--hand", "1")
    logged = run_cli(redis_server, archive_url, "log", "done2")
    assert wiring.archive_worker().run_once().archived == ["done2"]
    assert RedisEventStore_read(wiring, "done2") == []

    assert run_cli(redis_server, archive_url, "verify", "done2") == verified
    assert verified[0] == 0 and msgspec.json.decode(verified[1])["ok"] is True
    assert run_cli(redis_server, archive_url, "export", "done2", "--hand", "1") == exported
    assert run_cli(redis_server, archive_url, "log", "done2") == logged
    code, out, _ = run_cli(redis_server, archive_url, "verify", "--all")
    assert code == 0 and '"table":"done2"' in out


def test_a_hand_edited_in_postgres_fails_verify(
        redis_server: PrivateRedis, redis_client: redis.Redis, wiring: Wiring, archive_url: str) -> None:
    play_tables(redis_client, closed=["done3"])
    project(redis_client)
    stored = wiring.store.read("done3")
    played = next(e for e in stored if b'"card_played"' in e.data)
    card = msgspec.json.decode(played.data)["card"]
    other = "2C" if card != "2C" else "3C"
    assert wiring.archive_worker().run_once().archived == ["done3"]

    with psycopg.connect(archive_url, autocommit=True) as conn:
        conn.execute("UPDATE archive_events SET data = %s WHERE table_id = %s AND version = %s",
                     (played.data.replace(f'"card":"{card}"'.encode(), f'"card":"{other}"'.encode()),
                      "done3", played.version))

    code, out, _ = run_cli(redis_server, archive_url, "verify", "done3")
    assert code == 1
    assert msgspec.json.decode(out)["first_bad"]["version"] == played.version


def test_a_table_closed_less_than_the_delay_ago_stays_in_redis(
        redis_client: redis.Redis, wiring: Wiring) -> None:
    play_tables(redis_client, closed=["done4"])
    project(redis_client)
    worker = wiring.archive_worker(after_s=3600)
    report = worker.run_once()
    assert (report.discovered, report.archived, report.waiting) == (1, [], 1)
    assert RedisEventStore_read(wiring, "done4")
    closed = SPACE.namespace + ":" + SPACE.tag(SPACE.partition_of("done4")) + ":archive:closed"
    closed_ms = redis_client.zscore(closed, "done4")
    assert closed_ms is not None and abs(closed_ms - worker.now_ms()) < 60_000  # the close's own time


def test_a_table_whose_close_a_projection_has_not_applied_waits(
        redis_client: redis.Redis, wiring: Wiring) -> None:
    play_tables(redis_client, closed=["done5"])  # no projection has run
    report = wiring.archive_worker().run_once()
    assert (report.archived, report.held) == ([], 1)
    project(redis_client)
    assert wiring.archive_worker().run_once().archived == ["done5"]


def test_a_table_whose_hands_the_rater_has_not_applied_waits_and_keeps_their_records(
        redis_client: redis.Redis, wiring: Wiring) -> None:
    play_tables(redis_client, closed=["done14"])
    project(redis_client, rate=False)  # every kind applied its events; the rater has not run
    assert rated_hand_fields(redis_client, "done14")
    report = wiring.archive_worker().run_once()
    assert (report.archived, report.held) == ([], 1)
    assert RedisEventStore_read(wiring, "done14") and rated_hand_fields(redis_client, "done14")
    project(redis_client)  # now rated
    assert wiring.archive_worker().run_once().archived == ["done14"]
    assert rated_hand_fields(redis_client, "done14") == []


def rated_hand_fields(client: redis.Redis, table_id: str) -> list[str]:
    """The ratings' records of the table's hands in its partition (``ratings:hands:<hour>``)."""
    tag = SPACE.tag(SPACE.partition_of(table_id))
    return sorted(field.decode() for key in client.scan_iter(match=f"{SPACE.namespace}:{tag}:ratings:hands:*")
                  for field in client.hkeys(key) if field.decode().split(":")[1] == table_id)


def test_an_archived_tables_hand_records_leave_redis_and_a_re_rating_reads_its_hands_from_postgres(
        redis_server: PrivateRedis, redis_client: redis.Redis, wiring: Wiring, archive_url: str) -> None:
    play_tables(redis_client, closed=["done15", "done16"], live=["live3"], hands=2)
    project(redis_client)
    ratings = dump(redis_client, SPACE)
    assert ratings and len(rated_hand_fields(redis_client, "done15")) == 2
    kept = rated_hand_fields(redis_client, "live3")
    assert len(kept) == 2

    assert sorted(wiring.archive_worker().run_once().archived) == ["done15", "done16"]

    assert rated_hand_fields(redis_client, "done15") == rated_hand_fields(redis_client, "done16") == []
    assert rated_hand_fields(redis_client, "live3") == kept  # a live table's records stay
    assert dump(redis_client, SPACE) == ratings  # the ratings themselves stay
    code, out, _ = run_cli(redis_server, archive_url, "projections", "check", "ratings")
    assert code == 0, out  # the partitions without the archived hands, the ratings with them
    assert run_cli(redis_server, archive_url, "projections", "rebuild", "ratings")[0] == 0
    assert dump(redis_client, SPACE) == ratings  # re-rated from nothing: the same bytes
    assert rated_hand_fields(redis_client, "done15") == []  # the rebuild did not bring them back
    redis_client.hset(RatingsKeys(SPACE).reputation, "intruder", b"{}")
    code, out, _ = run_cli(redis_server, archive_url, "projections", "check", "ratings")
    assert code == EXIT_DIFFERENT and "intruder" in out


def test_an_archive_worker_that_waits_for_no_ratings_keeps_their_records(
        redis_client: redis.Redis, wiring: Wiring) -> None:
    play_tables(redis_client, closed=["done17"])
    project(redis_client, rate=False)
    records = rated_hand_fields(redis_client, "done17")
    worker = wiring.archive_worker(kinds=("views", "ledger", "directory"))
    assert worker.run_once().archived == ["done17"]  # no rater waited for
    assert rated_hand_fields(redis_client, "done17") == records  # so none of its records deleted


class HidingOne:
    """The archive's store, hiding one archived table from the first listing of the
    archived tables (as if it was archived just after a re-rating listed them)."""

    def __init__(self, store: Any, hidden: str) -> None:
        self.store, self.hidden, self.listings = store, hidden, 0

    def archived_ids(self, partition: int) -> list[str]:
        self.listings += partition == 0
        found = self.store.archived_ids(partition)
        return [t for t in found if t != self.hidden] if self.listings == 1 else found

    def read(self, table_id: str, after_version: int = 0, to_version: int | None = None) -> list[StoredEvent]:
        return self.store.read(table_id, after_version, to_version)


def test_a_re_rating_starts_over_when_a_table_is_archived_under_it_with_hands_it_did_not_apply(
        redis_client: redis.Redis, wiring: Wiring) -> None:
    play_tables(redis_client, closed=["done18", "done19"], hands=2)
    project(redis_client)
    ratings = dump(redis_client, SPACE)
    assert sorted(wiring.archive_worker().run_once().archived) == ["done18", "done19"]
    events = HidingOne(wiring.store, "done19")

    rebuild_ratings(redis_client, SPACE, events=events)

    assert events.listings >= 3  # the first listing, the check after it, the second attempt's check
    assert dump(redis_client, SPACE) == ratings  # done19's hands came in on the second attempt


class Unreachable:
    def archived_ids(self, partition: int) -> list[str]:
        return ["done20"] if partition == SPACE.partition_of("done20") else []

    def read(self, table_id: str, after_version: int = 0, to_version: int | None = None) -> list[StoredEvent]:
        raise ArchiveUnavailable("PostgreSQL is down")


def test_a_re_rating_that_cannot_read_the_archive_changes_nothing(redis_client: redis.Redis) -> None:
    play_tables(redis_client, closed=["done20"])
    project(redis_client)
    ratings = dump(redis_client, SPACE)
    with pytest.raises(ArchiveUnavailable):
        rebuild_ratings(redis_client, SPACE, events=Unreachable())
    assert dump(redis_client, SPACE) == ratings  # nothing deleted before the archive was read


def test_a_crash_between_the_copy_and_the_delete_is_finished_by_the_next_pass(
        redis_client: redis.Redis, wiring: Wiring, archive_url: str) -> None:
    play_tables(redis_client, closed=["done6"])
    project(redis_client)
    stored = RedisEventStore_read(wiring, "done6")

    def crash(table_id: str) -> None:
        raise SystemExit("killed between the copy and the delete")

    with pytest.raises(SystemExit):
        wiring.archive_worker(after_copy=crash).run_once()
    assert RedisEventStore_read(wiring, "done6") == stored  # nothing deleted
    with psycopg.connect(archive_url) as conn:
        assert conn.execute("SELECT count(*) FROM archive_events").fetchone() == (len(stored),)

    assert wiring.archive_worker().run_once().archived == ["done6"]
    with psycopg.connect(archive_url) as conn:
        assert conn.execute("SELECT count(*) FROM archive_events").fetchone() == (len(stored),)
    assert wiring.store.read("done6") == stored


def test_postgres_unreachable_deletes_nothing(redis_client: redis.Redis) -> None:
    play_tables(redis_client, closed=["done7"])
    project(redis_client)
    wired = wire(redis_client, settings(f"postgresql://mighty@127.0.0.1:{free_port()}/none"))
    stored = RedisEventStore_read(wired, "done7")
    with pytest.raises(ArchiveUnavailable):
        wired.archive_worker().run_once()
    assert RedisEventStore_read(wired, "done7") == stored
    assert wired.store.read("done7") == stored


def test_postgres_going_down_after_the_copy_deletes_nothing(redis_client: redis.Redis) -> None:
    """The copy committed, then PostgreSQL stopped before the read-back: the table stays in
    Redis; once PostgreSQL is back the next pass verifies the copy and finishes."""
    server = start_private_postgres()
    try:
        play_tables(redis_client, closed=["done8"])
        project(redis_client)
        wired = wire(redis_client, settings(server.url()))
        assert wired.archive is not None
        wired.archive.migrate()
        stored = RedisEventStore_read(wired, "done8")
        with pytest.raises(ArchiveUnavailable):
            wired.archive_worker(after_copy=lambda _: server.stop(mode="immediate")).run_once()
        assert RedisEventStore_read(wired, "done8") == stored
        server.start()
        assert wired.archive_worker().run_once().archived == ["done8"]
        assert wired.store.read("done8") == stored
    finally:
        server.stop(mode="immediate")
        server.remove()


def test_an_archive_worker_started_while_postgres_is_down_waits_for_it_then_archives(
        redis_client: redis.Redis) -> None:
    """``mighty serve`` stops the whole service when a part exits: the archive worker must
    not exit because PostgreSQL is down when it starts (its migrations wait too)."""
    import time

    server = start_private_postgres()
    stop = threading.Event()
    worker: threading.Thread | None = None
    try:
        server.stop(mode="immediate")
        play_tables(redis_client, closed=["done9"])
        project(redis_client)
        wired = wire(redis_client, settings(server.url()))
        stored = RedisEventStore_read(wired, "done9")
        failed: list[BaseException] = []

        def run() -> None:
            try:
                wired.archive_worker().run(stop, interval_s=0.05)
            except BaseException as error:
                failed.append(error)

        worker = threading.Thread(target=run)
        worker.start()
        time.sleep(0.5)  # passes against a PostgreSQL that is down
        assert worker.is_alive() and not failed, failed
        assert RedisEventStore_read(wired, "done9") == stored
        server.start()
        deadline = time.monotonic() + 30
        while RedisEventStore_read(wired, "done9") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert RedisEventStore_read(wired, "done9") == [] and wired.store.read("done9") == stored
    finally:
        stop.set()
        if worker is not None:
            worker.join(timeout=10)
        server.stop(mode="immediate")
        server.remove()


def test_several_archive_workers_archive_each_table_once(
        redis_server: PrivateRedis, redis_client: redis.Redis, wiring: Wiring, archive_url: str) -> None:
    closed = [f"many{i}" for i in range(8)]
    play_tables(redis_client, closed=closed)
    project(redis_client)
    archived: list[str] = []
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            client = connect(redis_server.url)
            wired = wire(client, settings(archive_url))
            archived.extend(wired.archive_worker(worker_id=f"w{n}").run_once().archived)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors
    assert sorted(archived) == sorted(closed)
    with psycopg.connect(archive_url) as conn:
        assert conn.execute("SELECT count(*) FROM archive_tables").fetchone() == (len(closed),)
    for table_id in closed:
        assert RedisEventStore_read(wiring, table_id) == []
        assert wiring.store.read(table_id)


def test_an_archived_table_cannot_be_created_again(redis_client: redis.Redis, wiring: Wiring) -> None:
    tables = play_tables(redis_client, closed=["done9"])
    project(redis_client)
    assert wiring.archive_worker().run_once().archived == ["done9"]
    with pytest.raises(Exception) as refused:
        wiring.handler.handle("done9", Submission(command=CreateTable(name="again"), player="p01"),
                              command_id="again-0")
    assert getattr(refused.value, "code", None) in {"table_exists", "table_closed"}, refused.value
    assert wiring.store.head("done9").version == tables.states["done9"][1]


def test_without_an_archive_an_archived_table_is_refused_never_read_as_empty(
        redis_server: PrivateRedis, redis_client: redis.Redis, wiring: Wiring) -> None:
    play_tables(redis_client, closed=["done10"])
    project(redis_client)
    assert wiring.archive_worker().run_once().archived == ["done10"]
    bare = wire(redis_client, settings(None))
    with pytest.raises(ArchiveUnavailable):
        bare.store.read("done10")
    with pytest.raises(ArchiveUnavailable):
        bare.handler.handle("done10", Submission(command=CreateTable(name="again"), player="p01"),
                            command_id="again-0")
    code, _, err = run_cli(redis_server, None, "verify", "done10")
    assert code == cli.EXIT_UNAVAILABLE and "MIGHTY_ARCHIVE_URL" in err


def test_the_projections_rebuild_to_the_same_documents_after_archiving(
        redis_server: PrivateRedis, redis_client: redis.Redis, wiring: Wiring, archive_url: str) -> None:
    play_tables(redis_client, closed=["done11", "done12"], live=["live2"], hands=2)
    project(redis_client)
    ledgers = player_ledgers(redis_client, SPACE)
    assert len(wiring.archive_worker().run_once().archived) == 2

    code, out, _ = run_cli(redis_server, archive_url, "projections", "check")
    assert code == 0, out
    assert run_cli(redis_server, archive_url, "projections", "rebuild")[0] == 0
    assert player_ledgers(redis_client, SPACE) == ledgers  # no ledger line lost
    assert run_cli(redis_server, archive_url, "projections", "check")[0] == 0
    with pytest.raises(AssertionError):  # Redis alone no longer knows the archived tables
        assert_identical_to_a_rebuild(redis_client, SPACE, ("ledger",))


def test_the_worker_command_archives_once_and_says_what_it_did(
        redis_server: PrivateRedis, redis_client: redis.Redis, wiring: Wiring, archive_url: str) -> None:
    play_tables(redis_client, closed=["done13"])
    project(redis_client)
    code, out, _ = run_cli(redis_server, archive_url, "worker", "archive", "--once",
                           "--archive-after-s", "0")
    assert code == 0
    assert msgspec.json.decode(out)["archived"] == 1
    assert RedisEventStore_read(wiring, "done13") == []


def test_the_schema_refuses_a_table_without_all_its_events(wiring: Wiring, archive_url: str) -> None:
    from services.archive.postgres import TableRow
    from services.store.base import GENESIS, HASH_V2, event_hash

    data = [b'{"a":1}', b'{"a":2}', b'{"a":3}']
    hashes: list[str] = []
    for i, d in enumerate(data):
        hashes.append(event_hash(hashes[-1] if hashes else GENESIS, d, f"c{i}"))
    events = [StoredEvent(i + 1, d, h, GENESIS if i == 0 else hashes[i - 1], f"c{i}", hash_version=HASH_V2)
              for i, (d, h) in enumerate(zip(data, hashes, strict=True))]
    row = TableRow(table_id="partial", variant="mighty-5", name="x", closed_ms=0, version=3, head=hashes[-1])
    archive = PostgresArchive(archive_url, namespace="arch")
    with pytest.raises(psycopg.errors.RaiseException):
        archive.write(row, events[:2], [])
    with pytest.raises(psycopg.errors.RaiseException):  # a broken link
        archive.write(row, [events[0], StoredEvent(2, data[1], hashes[1], GENESIS, "c1"), events[2]], [])
    assert archive.head("partial") is None  # nothing of either attempt is there
    assert archive.write(row, events, []) == "written"
    assert archive.write(row, events, []) == "present"
    with pytest.raises(ArchiveConflict):
        archive.write(msgspec.structs.replace(row, version=2, head=hashes[1]), events[:2], [])
    with psycopg.connect(archive_url) as conn, pytest.raises(psycopg.errors.RaiseException):
        conn.execute("DELETE FROM archive_events WHERE table_id = 'partial' AND version = 3")
    archive.close()


def test_migrations_apply_once_even_when_run_together(archive_url: str) -> None:
    results: list[Any] = []

    def run() -> None:
        archive = PostgresArchive(archive_url, namespace="arch")
        results.append(archive.migrate())
        archive.close()

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(results) == [[], [], [], [version for version, _, _ in migrations()]]
    with psycopg.connect(archive_url) as conn:
        assert conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall() == [
            (version,) for version, _, _ in migrations()]


def test_a_stream_broken_in_redis_is_kept_there(redis_client: redis.Redis, wiring: Wiring) -> None:
    play_tables(redis_client, closed=["done14"])
    project(redis_client)
    key = SPACE.table("done14").events
    entries = as_fields(redis_client.xrange(key))  # six fields each (tests/stream_entries.py)
    redis_client.delete(key)  # what someone with write access could do: event 2 edited
    edited = [(entry_id, {**fields, b"e": fields[b"e"] + b" "} if n == 1 else fields)
              for n, (entry_id, fields) in enumerate(entries)]
    for entry_id, fields in as_stored(edited):
        redis_client.xadd(key, fields, id=entry_id)
    report = wiring.archive_worker().run_once()
    assert report.kept == ["done14"]
    assert redis_client.exists(key)
    assert wiring.archive is not None and wiring.archive.head("done14") is None


def test_the_gateway_reads_an_archived_table_from_postgres(
        redis_server: PrivateRedis, redis_client: redis.Redis, wiring: Wiring, archive_url: str) -> None:
    from litestar.testing import TestClient

    from services.bootstrap import wire_gateway
    from services.gateway.app import create_app
    from services.store.async_redis_store import connect_async

    play_tables(redis_client, closed=["done12"], hands=2)
    project(redis_client)
    stored = wiring.store.read("done12")
    document = redis_client.get(f"arch:{SPACE.tag(SPACE.partition_of('done12'))}:ledger:t:done12")
    assert document is not None
    # what the gateway folds for an archived table is the document the projection kept
    assert table_ledger_of("done12", ((e.version, decode_event(e.data)) for e in stored)) == decode_table(document)
    assert wiring.archive_worker().run_once().archived == ["done12"]
    given = settings(archive_url)
    with TestClient(create_app(given, wire_gateway(connect_async(redis_server.url), given))) as client:
        hands = client.get("/api/v1/tables/done12/hands")
        assert hands.status_code == 200, hands.text
        assert [h["hand"] for h in hands.json()["hands"]] == [1, 2]
        assert all(h["status"] == "finished" for h in hands.json()["hands"])
        verified = client.get("/api/v1/tables/done12/verify")
        assert verified.status_code == 200, verified.text
        assert verified.json() == {"ok": True, "events": len(stored), "problem": None, "hands": 2,
                                   "version": None}
        hand = client.get("/api/v1/tables/done12/hands/2")
        assert hand.status_code == 200 and hand.json()["rules"] == "mighty-5" and hand.json()["commands"], hand.text
        steps = client.get("/api/v1/tables/done12/hands/1/replay", params={"as": "audit"})
        assert steps.status_code == 200 and steps.json()["steps"], steps.text
        ledger = client.get("/api/v1/tables/done12/ledger")
        assert ledger.status_code == 200 and len(ledger.json()["hands"]) == 2, ledger.text


def test_the_gateway_without_an_archive_refuses_an_archived_table_as_unavailable(
        redis_server: PrivateRedis, redis_client: redis.Redis, wiring: Wiring) -> None:
    from litestar.testing import TestClient

    from services.bootstrap import wire_gateway
    from services.gateway.app import create_app
    from services.store.async_redis_store import connect_async

    play_tables(redis_client, closed=["done13"])
    project(redis_client)
    assert wiring.archive_worker().run_once().archived == ["done13"]
    given = settings(None)
    with TestClient(create_app(given, wire_gateway(connect_async(redis_server.url), given))) as client:
        for route in ("hands", "ledger"):
            refused = client.get(f"/api/v1/tables/done13/{route}")
            assert refused.status_code == 503, refused.text
            assert refused.json()["code"] == "unavailable"
            assert "MIGHTY_ARCHIVE_URL" in refused.json()["message"]


def _chat_gateway(redis_server: PrivateRedis, archive_url: str | None) -> Any:
    from litestar.testing import TestClient

    from services.bootstrap import wire_gateway
    from services.gateway.app import create_app
    from services.store.async_redis_store import connect_async

    given = settings(archive_url)
    return TestClient(create_app(given, wire_gateway(connect_async(redis_server.url), given)))


def test_a_tables_chat_is_archived_with_it_and_still_answers(
        redis_server: PrivateRedis, redis_client: redis.Redis, wiring: Wiring, archive_url: str) -> None:
    play_tables(redis_client, closed=["done15"])
    project(redis_client)
    with _chat_gateway(redis_server, archive_url) as client:
        made = client.post("/api/v1/players", json={"name": "Ana"}).json()
        headers = {"Authorization": f"Bearer {made['token']}"}
        for body in ({"text": "gg <b>all</b>"}, {"phrase": "well_played"}, {"text": "again?"}):
            said = client.post("/api/v1/tables/done15/chat", json=body, headers=headers)
            assert said.status_code == 201, said.text  # a finished table still talks until archived
        before = client.get("/api/v1/tables/done15/chat").json()["messages"]
        assert [m["text"] for m in before] == ["gg <b>all</b>", "Well played!", "again?"]

        assert wiring.archive_worker().run_once().archived == ["done15"]
        assert not redis_client.exists(SPACE.table("done15").chat)  # gone from Redis with the table
        assert wiring.archive is not None and len(wiring.archive.chat("done15")) == 3

        assert client.get("/api/v1/tables/done15/chat").json()["messages"] == before  # from PostgreSQL
        later = client.get("/api/v1/tables/done15/chat", params={"after": before[0]["id"]}).json()["messages"]
        assert later == before[1:]
        assert client.get("/api/v1/tables/done15/chat", params={"after": before[-1]["id"]}).json()["messages"] == []
        refused = client.post("/api/v1/tables/done15/chat", json={"text": "anyone?"}, headers=headers)
        assert refused.status_code == 409 and refused.json()["code"] == "table_closed", refused.text
        assert not redis_client.exists(SPACE.table("done15").chat)  # nothing stored
        token = made["token"]
        chat: list[dict[str, Any]] = []
        with client.websocket_connect(f"/api/v1/tables/done15/stream?token={token}") as ws:
            for _ in range(10):  # its opening: the chat's latest messages (and the table's view)
                frame = ws.receive_json()
                if frame["type"] == "chat":
                    chat.append(frame)
                if len(chat) == len(before):
                    break
        assert [(f["id"], f["text"]) for f in chat] == [(m["id"], m["text"]) for m in before]
    with _chat_gateway(redis_server, None) as client:
        unavailable = client.get("/api/v1/tables/done15/chat")
        assert unavailable.status_code == 503 and unavailable.json()["code"] == "unavailable", unavailable.text


def test_a_chat_message_said_while_the_table_is_archived_is_archived_too(
        redis_client: redis.Redis, wiring: Wiring) -> None:
    play_tables(redis_client, closed=["done16"])
    project(redis_client)
    key = SPACE.table("done16").chat
    first = redis_client.xadd(key, {"m": b'{"player":"p1","name":"Ana","text":"hi"}'}).decode()

    def said_after_the_copy(table_id: str) -> None:
        redis_client.xadd(key, {"m": b'{"player":"p2","name":"Bo","text":"late"}'})

    report = wiring.archive_worker(after_copy=said_after_the_copy).run_once()
    assert report.archived == [] and redis_client.exists(SPACE.table("done16").events)  # nothing deleted
    assert wiring.archive is not None and [i for i, _ in wiring.archive.chat("done16")] == [first]
    assert wiring.archive_worker().run_once().archived == ["done16"]  # the next pass takes the late one too
    archived = wiring.archive.chat("done16")
    assert [data for _, data in archived] == [b'{"player":"p1","name":"Ana","text":"hi"}',
                                              b'{"player":"p2","name":"Bo","text":"late"}']
    assert not redis_client.exists(key)

"""Drill 5: PostgreSQL goes down (an immediate stop) while the archive worker runs, and the
archive worker is even restarted while it is down: nothing leaves Redis that is not safely
archived; once PostgreSQL is back, archiving completes and every archived table verifies."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from projections import KINDS
from services.archive.postgres import PostgresArchive
from services.archive.runtime import PostgresMissing, start_private_postgres
from services.store import connect
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore
from tests.drills.service import NAMESPACE, Service, drill_settings
from tests.integration.postgres import fresh_database

pytestmark = pytest.mark.timeout(180)

DOWN_S = 4.0  # PostgreSQL stays down this long: several archive passes
INTERVAL_S = "0.3"  # between two archive passes (mighty serve's worker takes 30 s)


def bot_table(base: str, token: str) -> str:
    """A one-hand table of five bots, which the bot worker plays to its close."""
    made = httpx.post(f"{base}/api/v1/tables", timeout=30, headers={"Authorization": f"Bearer {token}"},
                      json={"game": "mighty-5", "seat": None, "hands": 1, "turn_seconds": 0,
                            "bots": {str(seat): "beginner" for seat in range(5)}})
    assert made.status_code == 201, made.text
    table: str = made.json()["table"]
    return table


def in_redis(client: Any, space: KeySpace, table: str) -> int:
    """The events of ``table`` still in Redis."""
    return int(client.xlen(space.table(table).events))


def archived(client: Any, space: KeySpace, table: str) -> bool:
    partition = space.partition_of(table)
    return bool(client.hexists(f"{space.namespace}:{space.tag(partition)}:archived", table))


def wait(condition: Any, service: Service, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}\n{service.logs()}"
        assert not service.exited(), f"a part exited: {service.exited()}\n{service.logs()}"
        time.sleep(0.05)


def test_postgres_down_while_archiving_deletes_nothing_unarchived_and_the_archive_completes_after(
    tmp_path: Path, private_redis: Any, figures: Any,
) -> None:
    redis_ = private_redis("everysec")
    try:
        postgres = start_private_postgres()
    except PostgresMissing as error:
        pytest.fail(str(error))
    service = Service(tmp_path / "service",
                      drill_settings(redis_.url, archive_url=fresh_database(postgres), archive_after_s=0.0))
    client = connect(redis_.url)
    space = service.space
    try:
        for kind in (*KINDS, "bots", "gateway"):
            service.start(kind)
        service.start("archive", extra=("--interval-s", INTERVAL_S))
        service.wait_gateway()
        service.wait_leases(KINDS)
        base = service.base()
        token = httpx.post(f"{base}/api/v1/players", json={"name": "drill"}, timeout=30).json()["token"]
        first = bot_table(base, token)
        wait(lambda: archived(client, space, first), service, 60, "the first table to be archived")

        postgres.stop(mode="immediate")
        down_at = time.monotonic()
        service.kill("archive")  # and the worker starts again while PostgreSQL is down
        service.start("archive", extra=("--interval-s", INTERVAL_S))
        tables = [bot_table(base, token) for _ in range(2)]
        store = RedisEventStore(client, keys=space)
        state_of = {t: store.read(t) for t in tables}

        def closed() -> bool:
            for t in tables:
                state_of[t] = store.read(t)
            return all(b"table_closed" in events[-1].data for events in state_of.values() if events)

        wait(closed, service, 60, "the bots to finish their tables")
        checks = 0
        while checks == 0 or time.monotonic() < down_at + DOWN_S:  # passes fail; nothing leaves Redis
            for t in tables:
                assert in_redis(client, space, t) == len(state_of[t]) and not archived(client, space, t)
            assert not service.exited(), f"a part exited: {service.exited()}\n{service.logs()}"
            checks += 1
            time.sleep(0.1)

        postgres.start()
        up_at = time.monotonic()
        wait(lambda: all(archived(client, space, t) for t in tables), service, 60, "the archive to complete")
        recovered_s = time.monotonic() - up_at
        for t in tables:
            assert in_redis(client, space, t) == 0
        archive = PostgresArchive(service.settings.archive_url or "", namespace=NAMESPACE)
        try:
            for t in [first, *tables]:
                if t in state_of:
                    assert archive.read(t) == state_of[t]  # what left Redis is what PostgreSQL holds
                verified = service.mighty("verify", t)
                assert verified.returncode == 0, verified.stdout + verified.stderr
        finally:
            archive.close()
        assert not service.exited(), service.exited()
        figures(postgres_down_s=round(up_at - down_at, 3), tables_closed_while_down=len(tables),
                checks_while_down=checks, archived_after_postgres_back_s=round(recovered_s, 3))
    finally:
        service.stop()
        client.close()
        postgres.stop(mode="immediate")
        postgres.remove()

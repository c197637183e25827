"""Drill 1: a gateway is killed (SIGKILL) while its clients play; they resume on another."""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from projections import KINDS
from services.store import connect
from services.store.redis_store import RedisEventStore
from tests.drills.players import (
    guests,
    lost_commands,
    open_table,
    play_all,
    seats_of,
    unacknowledged,
)
from tests.drills.service import Service, drill_settings

pytestmark = pytest.mark.timeout(180)

TABLES = 2
KILL_AFTER = 20  # commands acknowledged before gateway A is killed
PLAY_S = 100.0


def test_clients_of_a_killed_gateway_resume_on_another_missing_nothing_and_repeating_nothing(
    tmp_path: Path, private_redis: Any, figures: Any,
) -> None:
    redis_ = private_redis("everysec")
    service = Service(tmp_path / "service", drill_settings(redis_.url))
    try:
        for kind in KINDS:
            service.start(kind)
        service.start("gateway")
        service.start("gateway-b", kind="gateway")
        for name in ("gateway", "gateway-b"):
            service.wait_gateway(name)
        service.wait_leases(KINDS)
        a, b = service.base("gateway"), service.base("gateway-b")
        seats = []
        for _ in range(TABLES):
            players = guests(a, 5)
            seats += seats_of(open_table(a, players), players, lambda: (a, b))

        killed_at: list[float] = []

        async def drill() -> None:
            until = time.monotonic() + PLAY_S
            play = asyncio.create_task(play_all(seats, until))
            while sum(len(s.journal.acked) for s in seats) < KILL_AFTER:
                assert not play.done(), "the tables ended before the kill"
                await asyncio.sleep(0.01)
            assert all(s.journal.connects[-1][1] == a for s in seats), "every client plays on gateway A"
            killed_at.append(time.monotonic())
            await asyncio.to_thread(service.kill, "gateway")
            await play

        asyncio.run(drill())

        assert all(s.journal.finished for s in seats), (
            f"unfinished seats: {[(s.table, s.seat, s.last) for s in seats if not s.journal.finished]}\n"
            f"{service.logs()}")
        client = connect(redis_.url)
        store = RedisEventStore(client, keys=service.space)
        commands = lost = 0
        for table in sorted({s.table for s in seats}):
            at_table = [s for s in seats if s.table == table]
            events = store.read(table)
            for seat in at_table:
                # nothing repeated: every view pushed newer than the last, across the reconnect
                assert seat.journal.repeats == 0 and seat.journal.versions == sorted(set(seat.journal.versions))
                # nothing missed: every client saw the table's last version (the close)
                assert seat.last == events[-1].version, (table, seat.seat, seat.last, events[-1].version)
                assert set(seat.journal.refused) <= {"unavailable"}, seat.journal.refused
                assert seat.journal.connects[-1][1] == b
            assert not unacknowledged(at_table)
            missing = lost_commands(at_table, events)
            assert not missing, missing
            commands += sum(len(s.journal.acked) for s in at_table)
            lost += len(missing)
            verified = service.mighty("verify", table)
            assert verified.returncode == 0, verified.stdout + verified.stderr
        client.close()
        assert service.exited() == {"gateway": -9}, service.exited()
        recover = [s.journal.first_progress_after(killed_at[0]) for s in seats]
        assert None not in recover
        times = [t for t in recover if t is not None]
        figures(clients=len(seats), commands_acknowledged=commands, commands_lost=lost,
                recover_max_s=round(max(times), 3), recover_median_s=round(statistics.median(times), 3),
                reconnects=sum(len(s.journal.connects) - 1 for s in seats))
    finally:
        service.stop()

"""Drill 2: the projection workers (views, ledger, directory) are killed (SIGKILL) mid-play
and started again; the projections converge to a rebuild from the streams."""

from __future__ import annotations

import asyncio
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
KILL_AFTER = 25
DOWN_S = 1.0  # the workers stay dead this long
PLAY_S = 100.0


def test_projection_workers_killed_mid_play_and_restarted_converge_to_a_rebuild_losing_no_command(
    tmp_path: Path, private_redis: Any, figures: Any,
) -> None:
    redis_ = private_redis("everysec")
    service = Service(tmp_path / "service", drill_settings(redis_.url))
    try:
        for kind in KINDS:
            service.start(kind)
        service.start("gateway")
        service.wait_gateway()
        service.wait_leases(KINDS)
        base = service.base()
        seats = []
        for _ in range(TABLES):
            players = guests(base, 5)
            seats += seats_of(open_table(base, players), players, lambda: (base,))
        moments: dict[str, float] = {}

        async def drill() -> None:
            play = asyncio.create_task(play_all(seats, time.monotonic() + PLAY_S))
            while sum(len(s.journal.acked) for s in seats) < KILL_AFTER:
                assert not play.done(), "the tables ended before the kill"
                await asyncio.sleep(0.01)
            moments["killed"] = time.monotonic()
            for kind in KINDS:
                await asyncio.to_thread(service.kill, kind)
            moments["acked_at_kill"] = sum(len(s.journal.acked) for s in seats)
            await asyncio.sleep(DOWN_S)
            moments["restarted"] = time.monotonic()
            for kind in KINDS:
                service.start(kind)
            await play

        asyncio.run(drill())

        assert all(s.journal.finished for s in seats), service.logs()
        assert service.exited() == {}, service.exited()
        client = connect(redis_.url)
        store = RedisEventStore(client, keys=service.space)
        lost = 0
        for table in sorted({s.table for s in seats}):
            at_table = [s for s in seats if s.table == table]
            events = store.read(table)
            assert not unacknowledged(at_table)
            missing = lost_commands(at_table, events)
            assert not missing, missing
            lost += len(missing)
            for seat in at_table:
                assert seat.journal.repeats == 0 and seat.last == events[-1].version
                assert not seat.journal.refused, seat.journal.refused
        client.close()
        # the workers catch up with the feeds, then what they stored is what a rebuild makes
        service.wait_gateway(timeout_s=60)
        lag = service.mighty("projections", "lag")
        checked = service.mighty("projections", "check")
        assert checked.returncode == 0, checked.stdout + checked.stderr + lag.stdout
        # the first view pushed after the restart: the time the clients waited for the views
        resumed = [t for s in seats if (t := s.journal.first_view_after(moments["restarted"])) is not None]
        figures(commands_acknowledged=sum(len(s.journal.acked) for s in seats), commands_lost=lost,
                first_view_after_restart_s=round(min(resumed), 3),
                views_resumed_after_kill_s=round(moments["restarted"] - moments["killed"] + min(resumed), 3))
    finally:
        service.stop()

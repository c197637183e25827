"""Drill 3: the redis-server goes away mid-play and comes back on its AOF: killed (SIGKILL)
under the ``always`` profile, shut down (SIGTERM: Redis's SHUTDOWN, which fsyncs the AOF)
under ``everysec``. Nothing crashes; meanwhile the API answers ``unavailable``; after it
play resumes and no acknowledged command is lost."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.drills.outage import Outage, run_outage_drill

pytestmark = pytest.mark.timeout(180)

DOWN_S = 2.0


@pytest.mark.parametrize(("durability", "sig"), [("always", signal.SIGKILL), ("everysec", signal.SIGTERM)],
                         ids=["always-sigkill", "everysec-shutdown"])
def test_redis_restarted_mid_play_crashes_nothing_answers_unavailable_and_loses_no_acknowledged_command(
    tmp_path: Path, private_redis: Any, figures: Any, durability: str, sig: int,
) -> None:
    redis_ = private_redis(durability)

    async def outage(drill: Outage) -> None:
        await asyncio.to_thread(redis_.kill, sig)
        drill.began()
        await drill.probe_for(DOWN_S)
        await asyncio.to_thread(redis_.start)
        drill.ended()

    found = run_outage_drill(tmp_path, redis_.url, outage)
    figures(durability=durability, signal=signal.Signals(sig).name, **found.figures())
    assert found.lost == 0

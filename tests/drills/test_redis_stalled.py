"""Drill 4: the redis-server is stopped (SIGSTOP) mid-play, so every call to it times out,
and continued (SIGCONT) a few seconds later. Nothing crashes; meanwhile the API answers
``unavailable``; afterwards play resumes and no acknowledged command is lost."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.drills.outage import Outage, run_outage_drill

pytestmark = pytest.mark.timeout(180)

STOPPED_S = 7.0  # longer than a client's socket timeout (5 s): calls time out, not just wait


def test_redis_stopped_mid_play_crashes_nothing_answers_unavailable_and_play_resumes_after_it(
    tmp_path: Path, private_redis: Any, figures: Any,
) -> None:
    redis_ = private_redis("everysec")
    assert redis_.pid is not None

    async def outage(drill: Outage) -> None:
        os.kill(redis_.pid, signal.SIGSTOP)
        drill.began()
        await drill.probe_for(STOPPED_S)
        os.kill(redis_.pid, signal.SIGCONT)
        drill.ended()

    found = run_outage_drill(tmp_path, redis_.url, outage)
    figures(stopped_s=STOPPED_S, **found.figures())
    assert found.lost == 0

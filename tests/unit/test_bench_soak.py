"""``mighty bench soak`` (bench/soak.py): the figures it derives from its samples (each
process's RSS after warm-up, at the end and its slope; Redis bytes per finished hand),
and which keys ``mighty bench memory``'s grouping puts the soak's new keys under."""

from __future__ import annotations

from typing import Any

import pytest

from bench.memory import category
from bench.soak import per_finished_hand, process_rss, slope_per_minute


def _sample(t: float, **rss: float) -> dict[str, Any]:
    return {"t": t, "rss": rss}


def test_each_process_is_reported_from_the_first_sample_after_warmup_to_the_last() -> None:
    samples = [_sample(0, gateway=50.0, views=40.0), _sample(60, gateway=90.0, views=41.0),
               _sample(120, gateway=91.0, views=41.0), _sample(180, gateway=93.0, views=41.0)]
    table = process_rss(samples, warmup_s=60)
    assert set(table) == {"gateway", "views"}
    assert table["gateway"]["after_warmup_mb"] == 90.0 and table["gateway"]["end_mb"] == 93.0
    assert table["gateway"]["max_mb"] == 93.0
    assert table["gateway"]["slope_mb_per_min"] == pytest.approx(1.5)  # 90, 91, 93 over 2 minutes
    assert table["views"]["slope_mb_per_min"] == pytest.approx(0.0)  # the warm-up's climb left out


def test_a_process_missing_from_some_samples_is_sloped_over_those_it_has() -> None:
    samples = [_sample(0, gateway=10.0), _sample(60, gateway=10.0, archive=30.0), _sample(120, gateway=10.0, archive=32.0)]
    table = process_rss(samples, warmup_s=0)
    assert table["archive"]["after_warmup_mb"] == 30.0 and table["archive"]["end_mb"] == 32.0
    assert table["archive"]["slope_mb_per_min"] == pytest.approx(slope_per_minute([(60, 30.0), (120, 32.0)]))


def test_no_sample_after_warmup_reports_every_sample() -> None:
    table = process_rss([_sample(5, gateway=20.0), _sample(10, gateway=21.0)], warmup_s=600)
    assert table["gateway"]["after_warmup_mb"] == 20.0 and table["gateway"]["end_mb"] == 21.0


def test_redis_bytes_per_finished_hand_is_the_growth_over_the_hands() -> None:
    start = {"used_memory": 1_000_000, "finished_hands": 0}
    assert per_finished_hand(start, {"used_memory": 1_250_000, "finished_hands": 1_000}) == 250.0
    assert per_finished_hand(start, {"used_memory": 1_250_000, "finished_hands": 0}) is None


def test_the_archive_index_gateway_command_ids_players_timers_and_ratings_have_their_own_category() -> None:
    assert category("soak-1:{p03}:archived") == "archive index"
    assert category("soak-1:gateway:{gw:Pabc}:command:t1:c17") == "gateway command ids"
    assert category("soak-1:player:Pabc") == "players"
    assert category("soak-1:{timers}:deadline:t1") == "timers"
    assert category("soak-1:{p03}:ratings:hands:499006") == "ratings"
    assert category("soak-1:{p03}:ledger:t:t1") == "ledger"

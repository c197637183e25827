"""services/projection/lag_log.py: a worker says it is behind only when some partition is
at least a second behind, at most every ten seconds while it stays so, then once that it
caught up; it summarises what it applied once a period, and only when it applied something."""

from __future__ import annotations

from services.projection.lag_log import Behind, CaughtUp, LagLog, Summary

QUIET = {0: (0, 0), 1: (0, 0)}


def test_a_worker_that_keeps_up_says_nothing_however_often_it_measures() -> None:
    lag = LagLog()
    said = [lag.observe(t * 1.0, QUIET) for t in range(120)]
    said += [lag.observe(120.0 + t, {0: (3, 999), 1: (1, 40)}) for t in range(60)]  # under a second behind
    assert said == [None] * 180


def test_a_partition_a_second_behind_is_said_at_once_with_every_partitions_entries() -> None:
    lag = LagLog()
    assert lag.observe(0.0, QUIET) is None
    said = lag.observe(1.0, {0: (5, 1000), 1: (2, 300), 2: (0, 0)})
    assert said == Behind(partitions=(0,), entries=7, ms=1000, behind_s=0.0)


def test_while_behind_it_is_said_at_most_every_ten_seconds() -> None:
    lag = LagLog()
    late = {3: (40, 2500)}
    said = {t: lag.observe(float(t), late) for t in range(0, 31)}
    assert [t for t, note in said.items() if note is not None] == [0, 10, 20, 30]
    assert said[20] == Behind(partitions=(3,), entries=40, ms=2500, behind_s=20.0)


def test_catching_up_is_said_once_with_how_long_it_was_behind() -> None:
    lag = LagLog()
    lag.observe(0.0, {1: (9, 1500)})
    lag.observe(4.0, {1: (2, 1100)})
    assert lag.observe(6.5, {1: (1, 200)}) == CaughtUp(behind_s=6.5)
    assert [lag.observe(7.0 + t, QUIET) for t in range(30)] == [None] * 30
    assert not lag.behind


def test_falling_behind_again_after_catching_up_is_said_again_at_once() -> None:
    lag = LagLog()
    lag.observe(0.0, {0: (1, 1200)})
    lag.observe(1.0, QUIET)
    again = lag.observe(2.0, {0: (1, 1200)})
    assert again == Behind(partitions=(0,), entries=1, ms=1200, behind_s=0.0)


def test_the_threshold_and_the_repeat_are_settings_of_the_policy() -> None:
    lag = LagLog(behind_ms=100, repeat_s=2.0)
    said = [lag.observe(float(t), {0: (1, 150)}) for t in range(5)]
    assert [note is not None for note in said] == [True, False, True, False, True]


def test_a_summary_says_what_was_applied_in_each_period_only_when_something_was() -> None:
    summary = Summary(every_s=60.0)
    assert summary.observe(0.0, 12) is None  # starts the first period; 12 applied while taking partitions
    assert summary.observe(30.0, 20) is None  # not time yet
    assert summary.observe(60.0, 20) == 20  # everything since the worker started
    assert summary.observe(120.0, 20) is None  # an idle period: no line
    assert summary.observe(150.0, 25) is None
    assert summary.observe(180.0, 26) == 6


def test_an_idle_worker_never_summarises() -> None:
    summary = Summary(every_s=5.0)
    assert [summary.observe(float(t), 0) for t in range(0, 600)] == [None] * 600

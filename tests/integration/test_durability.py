"""The durability profiles, counted (bench/durability.py, small): a SIGKILLed redis-server
loses no acknowledged command under either profile; an OS crash, emulated by cutting the
AOF back to what was fsynced, loses the last second's acknowledgements under everysec
(two at most, when Redis postponed a write behind a slow fsync) and nothing under always."""

from __future__ import annotations

import pytest

from bench.durability import run

pytestmark = pytest.mark.integration


def test_everysec_loses_nothing_to_a_process_kill_and_about_the_last_second_to_an_os_crash() -> None:
    found = run("everysec", seconds=3.5, tables=8)
    assert found["acknowledged"] > 0
    assert found["lost_on_process_kill"] == 0
    assert found["lost_on_os_crash_emulated"] > 0, "the cut took acknowledged commands"
    # an acknowledged command reached the AOF at most 2 s after its reply (Redis postpones
    # its write while a slow fsync runs): only those acknowledged after the kept size was
    # sampled, less those 2 s, can be cut; what was acknowledged before survives
    assert found["lost_on_os_crash_emulated"] <= found["acknowledged_after_the_cut_less_the_postponement"]
    assert found["acknowledged_after_the_cut_less_the_postponement"] < found["acknowledged"]


def test_always_loses_nothing_to_a_process_kill_or_an_os_crash() -> None:
    found = run("always", seconds=1.2, tables=8)
    assert found["acknowledged"] > 0
    assert found["lost_on_process_kill"] == 0
    assert found["lost_on_os_crash_emulated"] == 0

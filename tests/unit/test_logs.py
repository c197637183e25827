"""The log lines' timestamp: services.logs' cheaper stamper writes what structlog's does."""

from __future__ import annotations

import datetime

import pytest

from services import logs


def structlog_would_write(ns: int) -> str:
    """``TimeStamper(fmt="iso", utc=True)``'s text for the moment ``ns`` (its own
    ``datetime.now(tz=utc).isoformat().replace("+00:00", "Z")``)."""
    moment = datetime.datetime.fromtimestamp(ns // 10**9, tz=datetime.UTC)
    return moment.replace(microsecond=ns // 1000 % 10**6).isoformat().replace("+00:00", "Z")


@pytest.mark.parametrize("moments", [
    # within one second, at a second's very start (no fraction, as isoformat), across
    # seconds, minutes, days and a year, and a clock stepped back
    [1_764_628_310_123_456_789, 1_764_628_310_999_999_000, 1_764_628_311_000_000_000],
    [1_764_628_319_999_999_999, 1_764_628_320_000_001_000, 1_764_633_599_500_000_000],
    [1_767_225_599_999_999_000, 1_767_225_600_000_000_999, 1_764_628_310_000_500_000],
])
def test_the_stamp_is_structlogs_iso_utc_text(moments: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    stamper = logs.IsoUtcStamper()
    for ns in moments:
        monkeypatch.setattr(logs.time, "time_ns", lambda ns=ns: ns)
        assert stamper(None, "info", {})["timestamp"] == structlog_would_write(ns)


def test_the_stamp_reads_the_real_clock() -> None:
    before = datetime.datetime.now(tz=datetime.UTC)
    stamp = logs.IsoUtcStamper()(None, "info", {})["timestamp"]
    after = datetime.datetime.now(tz=datetime.UTC)
    assert before <= datetime.datetime.fromisoformat(stamp) <= after

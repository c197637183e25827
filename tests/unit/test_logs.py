"""The log lines' timestamp: services.logs' cheaper stamper writes what structlog's does."""

from __future__ import annotations

import datetime
import json

import pytest
import structlog

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


@pytest.mark.parametrize("method", ["info", "warning", "warn", "error", "exception"])
def test_a_json_line_is_what_structlogs_own_processors_write(method: str) -> None:
    """The same keys in the same order with the same values (the timestamp's text is
    pinned above), as add_log_level, TimeStamper and JSONRenderer would write."""
    theirs = [structlog.processors.add_log_level,
              structlog.processors.TimeStamper(fmt="iso", utc=True),
              structlog.processors.JSONRenderer(serializer=lambda d, **_: json.dumps(d))]

    def line(processors: list[object]) -> list[tuple[str, object]]:
        event: object = {"table": "t1", "seat": 2, "command": "Play", "outcome": "ok",
                         "latency_ms": 0.123, "event": "command"}
        for processor in processors:
            event = processor(None, method, event)  # type: ignore[operator]
        assert isinstance(event, str)
        return [(k, "<time>" if k == "timestamp" else v) for k, v in json.loads(event).items()]

    assert line(logs.json_processors()) == line(theirs)


def test_a_json_line_of_an_exception_carries_its_traceback() -> None:
    """``log.exception`` in a service writes what failed, not ``"exc_info": true``."""
    try:
        raise LookupError("the table's shard moved")
    except LookupError:
        event: object = {"table": "t1", "event": "stream_failed", "exc_info": True}
        for processor in logs.json_processors():
            event = processor(None, "exception", event)  # type: ignore[operator]
    assert isinstance(event, str)
    written = json.loads(event)
    assert "exc_info" not in written
    assert "LookupError: the table's shard moved" in written["exception"]
    assert "Traceback" in written["exception"]

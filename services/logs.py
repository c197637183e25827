"""structlog setup: JSON lines in production, readable lines on a terminal.

The format and level come from the process's ``Settings`` (``MIGHTY_LOG_FORMAT=json|console``
forces one, by default JSON unless stderr is a TTY; ``MIGHTY_LOG_LEVEL``, default ``info``,
filters). Logs go to stderr, so a CLI command's standard output stays its interface.
"""

from __future__ import annotations

import datetime
import logging
import sys
import time
from typing import Any

import msgspec
import structlog

from services.settings import Settings, settings_from

_encoder = msgspec.json.Encoder(enc_hook=repr)  # anything msgspec can't encode is logged as repr


def _to_json(event: object, **_: object) -> str:
    """msgspec instead of the json module: a few µs less on every command's log line."""
    return _encoder.encode(event).decode()


class IsoUtcStamper:
    """Adds ``timestamp`` exactly as ``structlog.processors.TimeStamper(fmt="iso",
    utc=True)`` writes it (``2026-12-01T22:31:50.123456Z``; no fraction at ``.000000``,
    as ``isoformat`` does) for a quarter of its cost: the date and time of day are
    formatted once a second, only the microseconds on each line. Every command logs a
    line, and structlog's stamp was ~5 % of the async path's client CPU
    (docs/performance.md)."""

    __slots__ = ("_second_us", "_prefix")

    def __init__(self) -> None:
        self._second_us = 0  # the whole second the prefix names, in µs since the epoch
        self._prefix = "1970-01-01T00:00:00"

    def __call__(self, logger: Any, method_name: str, event_dict: Any) -> Any:
        now_us = time.time_ns() // 1000
        micros = now_us - self._second_us
        if not 0 <= micros < 1_000_000:
            second = now_us // 1_000_000
            moment = datetime.datetime.fromtimestamp(second, tz=datetime.UTC)
            self._prefix = moment.strftime("%Y-%m-%dT%H:%M:%S")
            self._second_us = second * 1_000_000
            micros = now_us - self._second_us
        event_dict["timestamp"] = f"{self._prefix}.{micros:06d}Z" if micros else f"{self._prefix}Z"
        return event_dict


def configure_logging(settings: Settings | None = None) -> None:
    """Configure structlog for ``settings`` (default: from the environment)."""
    settings = settings_from() if settings is None else settings
    fmt = settings.log_format or ("console" if sys.stderr.isatty() else "json")
    level = logging.getLevelNamesMapping().get(settings.log_level.upper(), logging.INFO)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer(serializer=_to_json) if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            IsoUtcStamper(),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )

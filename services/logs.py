"""structlog setup: JSON lines in production, readable lines on a terminal.

The format and level come from the process's ``Settings`` (``MIGHTY_LOG_FORMAT=json|console``
forces one, by default JSON unless stderr is a TTY; ``MIGHTY_LOG_LEVEL``, default ``info``,
filters). Logs go to stderr, so a CLI command's standard output stays its interface, each line in
one write (processes sharing a terminal do not interleave mid-line).
"""

from __future__ import annotations

import datetime
import logging
import sys
import time
from typing import Any

import msgspec
import structlog

from services.redaction import route_library_logs
from services.settings import Settings, settings_from

_encoder = msgspec.json.Encoder(enc_hook=repr)  # anything msgspec can't encode is logged as repr


def render_json(logger: Any, method_name: str, event_dict: Any) -> str:
    """The line as JSON, by msgspec (a few µs less than the json module on every
    command's line), called as the processor itself: ``JSONRenderer(serializer=...)``
    gave the same text through two more calls. A line of ``log.exception`` (or with
    ``exc_info``) carries the traceback as ``exception``, as ``format_exc_info`` writes it."""
    if "exc_info" in event_dict:
        event_dict = _format_exc_info(logger, method_name, event_dict)
    return _encoder.encode(event_dict).decode()


_format_exc_info = structlog.processors.format_exc_info


_LEVEL_OF = {"warn": "warning", "exception": "error"}  # structlog's map_method_name


def json_processors() -> list[Any]:
    """The processors of a JSON line after the context's: ``level``, ``timestamp``, then
    the JSON text (what ``add_log_level``, ``TimeStamper(fmt="iso", utc=True)`` and
    ``JSONRenderer`` write, in that order, with three calls fewer a line)."""
    return [IsoUtcStamper(add_level=True), render_json]


class IsoUtcStamper:
    """Adds ``timestamp`` exactly as ``structlog.processors.TimeStamper(fmt="iso",
    utc=True)`` writes it (``2026-12-01T22:31:50.123456Z``; no fraction at ``.000000``,
    as ``isoformat`` does) for a quarter of its cost: the date and time of day are
    formatted once a second, only the microseconds on each line. Every command logs a
    line, and structlog's stamp was ~5 % of the async path's client CPU
    (docs/performance.md). ``add_level`` also adds ``level`` first, as
    ``add_log_level`` does."""

    __slots__ = ("_second_us", "_prefix", "_level")

    def __init__(self, *, add_level: bool = False) -> None:
        self._second_us = 0  # the whole second the prefix names, in µs since the epoch
        self._prefix = "1970-01-01T00:00:00"
        self._level = add_level

    def __call__(self, logger: Any, method_name: str, event_dict: Any) -> Any:
        if self._level:  # as structlog's add_log_level, without its two calls
            event_dict["level"] = _LEVEL_OF.get(method_name, method_name)
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


class CurrentStderr:
    """``sys.stderr`` as it is when a line is written, not as it was when logging was
    configured: loggers are cached on first use (``cache_logger_on_first_use``), so a
    process whose stderr is replaced afterwards (a CLI command run in-process, under a
    test's captured output) would keep writing to the old, perhaps closed, file."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(settings: Settings | None = None) -> None:
    """Configure structlog for ``settings`` (default: from the environment)."""
    settings = settings_from() if settings is None else settings
    fmt = settings.log_format or ("console" if sys.stderr.isatty() else "json")
    level = logging.getLevelNamesMapping().get(settings.log_level.upper(), logging.INFO)
    processors: list[Any] = [structlog.contextvars.merge_contextvars]
    if fmt == "json":
        processors += json_processors()
    else:
        processors += [structlog.processors.add_log_level, IsoUtcStamper(),
                       structlog.dev.ConsoleRenderer(colors=False)]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(level),
        # WriteLogger writes the line and its newline in one write, then flushes: lines from
        # the processes sharing a terminal (mighty serve's) never interleave mid-line, as
        # PrintLogger's print (text, then newline: two writes) let them
        logger_factory=structlog.WriteLoggerFactory(file=CurrentStderr()),  # type: ignore[arg-type]  # write and flush are all it uses
        cache_logger_on_first_use=True,
    )
    route_library_logs()  # the libraries' records as structlog lines, tokens redacted

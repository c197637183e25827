"""structlog setup: JSON lines in production, readable lines on a terminal.

The format and level come from the process's ``Settings`` (``MIGHTY_LOG_FORMAT=json|console``
forces one, by default JSON unless stderr is a TTY; ``MIGHTY_LOG_LEVEL``, default ``info``,
filters). Logs go to stderr, so a CLI command's standard output stays its interface.
"""

from __future__ import annotations

import logging
import sys

import msgspec
import structlog

from services.settings import Settings, settings_from

_encoder = msgspec.json.Encoder(enc_hook=repr)  # anything msgspec can't encode is logged as repr


def _to_json(event: object, **_: object) -> str:
    """msgspec instead of the json module: a few µs less on every command's log line."""
    return _encoder.encode(event).decode()


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
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )

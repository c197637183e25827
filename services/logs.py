"""structlog setup: JSON lines in production, readable lines on a terminal.

``MIGHTY_LOG_FORMAT=json|console`` forces one; by default JSON unless stderr is a TTY.
``MIGHTY_LOG_LEVEL`` (default ``info``) filters. Logs go to stderr, so a CLI command's
standard output stays its interface.
"""

from __future__ import annotations

import logging
import os
import sys

import msgspec
import structlog

_encoder = msgspec.json.Encoder(enc_hook=repr)  # anything msgspec can't encode is logged as repr


def _to_json(event: object, **_: object) -> str:
    """msgspec instead of the json module: a few µs less on every command's log line."""
    return _encoder.encode(event).decode()


def configure_logging() -> None:
    fmt = os.environ.get("MIGHTY_LOG_FORMAT") or ("console" if sys.stderr.isatty() else "json")
    level = logging.getLevelNamesMapping().get(os.environ.get("MIGHTY_LOG_LEVEL", "info").upper(), logging.INFO)
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

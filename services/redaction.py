"""Secrets out of logs, and the libraries' logs (uvicorn, websockets, asyncio...) as the
service's own lines.

No log line may hold a token (a guest's lives 30 days, an account's refresh token as long
as its session) or a password: the libraries' standard ``logging`` records go through
``LibraryLogs``, which writes them as structlog lines (``event: "library"``, ``logger``,
``message``) with every token (a guest's, an account's access and refresh tokens), every
``token=`` query value, ``Authorization`` credential and ``password``/``refresh`` field
(JSON or form) replaced by ``<redacted>``, and only from ``WARNING`` up. The service's own
lines never name a body's fields (docs/accounts.md, "Secrets"). Up from here: uvicorn's info lines (a line per WebSocket accepted, with its URL and so its
``?token=``; "connection open"...) are routine, not worth reading.
"""

from __future__ import annotations

import logging
import re
import traceback
from typing import Any, Final

import structlog

REDACTED: Final = "<redacted>"
# <player>.<expiry>.<signature> (services/gateway/tokens.py): a signature is 43 urlsafe
# base64 characters; any shape close to it goes, whatever its player or expiry
_TOKEN: Final = re.compile(r"[A-Za-z0-9_-]+\.[0-9\u0660-\u0669\u06f0-\u06f9]+\.[A-Za-z0-9_-]{20,}")
# an account's access token <player>.<session>.<expiry>.<signature> is caught by _TOKEN's
# last three parts; its refresh token <player>.<session>.<secret>: a 43-character secret
_REFRESH: Final = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")
_QUERY: Final = re.compile(r"(?i)(\b(?:token|refresh|password)=)[^&\s\"'#]*")
# a JSON or Python field: "password": "...", 'refresh': '...' (the value up to its closing quote)
_FIELD: Final = re.compile(r"(?i)([\"']?(?:password|refresh)[\"']?\s*[:=]\s*)(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|[^\s,;}&]+)")
_CREDENTIALS: Final = re.compile(r"(?i)\b(authorization[\"']?\s*[:=,]\s*[\"']?|bearer\s+)[^\s\"',;]+")

_LIBRARY_LEVEL: Final = logging.WARNING


def redact(text: str) -> str:
    """``text`` with every token-like secret replaced by ``<redacted>``."""
    if ("." not in text and "=" not in text and "earer" not in text and "uthorization" not in text
            and "assword" not in text and "efresh" not in text):
        return text
    text = _QUERY.sub(lambda m: m.group(1) + REDACTED, text)
    text = _FIELD.sub(lambda m: m.group(1) + REDACTED, text)
    text = _CREDENTIALS.sub(lambda m: m.group(1) + REDACTED, text)
    text = _REFRESH.sub(REDACTED, text)
    return _TOKEN.sub(REDACTED, text)


class LibraryLogs(logging.Handler):
    """The root logger's handler: a library's record as one structlog line, redacted."""

    def __init__(self) -> None:
        super().__init__(level=_LIBRARY_LEVEL)
        self._log = structlog.get_logger("mighty.library")

    def emit(self, record: logging.LogRecord) -> None:
        try:
            fields: dict[str, Any] = {"logger": record.name, "message": redact(record.getMessage())}
            if record.exc_info and record.exc_info[0] is not None:
                fields["exception"] = redact("".join(traceback.format_exception(*record.exc_info)))
            level = record.levelname.lower()
            write = getattr(self._log, level if level in ("warning", "error", "critical") else "warning")
            write("library", **fields)
        except Exception:  # a log line never takes the process down
            self.handleError(record)


def route_library_logs() -> None:
    """Send every ``logging`` record of the process (the libraries') through
    ``LibraryLogs``, and nothing else: handlers a library installed are removed, and the
    loggers that uvicorn and websockets name are kept at ``WARNING``."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(LibraryLogs())
    root.setLevel(_LIBRARY_LEVEL)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "websockets", "litestar", "asyncio"):
        logger = logging.getLogger(name)
        logger.setLevel(_LIBRARY_LEVEL)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.propagate = True

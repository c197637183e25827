"""A logger cached on first use writes to the stderr of the moment it writes, so a command
run in-process under a replaced stderr (a test's capture) never writes to a closed file."""

from __future__ import annotations

import io
import sys

import pytest
import structlog

from services.logs import configure_logging
from services.settings import Settings


def test_a_cached_logger_follows_stderr_when_it_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    configure_logging(Settings(log_format="json", log_level="info"))
    log = structlog.get_logger("mighty.test")
    log.info("one")
    first.close()  # as pytest closes a test's captured stderr
    monkeypatch.setattr(sys, "stderr", second)
    log.info("two")
    assert '"event":"two"' in second.getvalue().replace(" ", "")

"""Suite-wide fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog


@pytest.fixture(autouse=True)
def _fresh_structlog() -> Iterator[None]:
    """A test that runs the CLI in-process points structlog at pytest's captured stderr,
    which pytest closes afterwards; start every test from structlog's defaults."""
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


@pytest.fixture(autouse=True)
def _no_deployment_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's REDIS_URL or MIGHTY_* variables must not point a test (or the CLI
    processes it starts, which inherit the environment) at their store."""
    from services.settings import ENVIRONMENT

    for variable in ENVIRONMENT.values():
        monkeypatch.delenv(variable, raising=False)

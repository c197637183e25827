"""A private PostgreSQL server for the archive's tests: one per test session (initdb
takes a few seconds), a fresh database per test. ``services/archive/runtime.py`` says how
the binaries are found and how it runs under root. A machine without PostgreSQL fails
these tests (``deploy/install-postgres.sh`` installs it): they never turn into skips."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import psycopg
import pytest

from services.archive.runtime import PostgresMissing, PrivatePostgres, start_private_postgres


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PrivatePostgres]:
    try:
        server = start_private_postgres()
    except PostgresMissing as error:
        pytest.fail(str(error))
    try:
        yield server
    finally:
        server.stop(mode="immediate")
        server.remove()


def fresh_database(server: PrivatePostgres) -> str:
    name = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}".encode())
    return server.url(name)


@pytest.fixture
def archive_url(postgres_server: PrivatePostgres) -> str:
    """A new, empty database of the session's server (no schema yet)."""
    return fresh_database(postgres_server)

"""The archive's schema: plain versioned SQL files (``migrations/0001_init.sql``, …)
applied in order by ``migrate``, which records each applied version in
``schema_migrations``.

Idempotent: a version already recorded is not applied again. Concurrent-safe: the runner
takes a transaction-scoped advisory lock first, so two archive workers starting together
apply each file once (the second waits, then finds it recorded). Each file and its record
are one transaction with the lock: a file that fails leaves nothing applied.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Final

import psycopg
import structlog

log = structlog.get_logger("mighty.archive")

# pg_advisory_xact_lock's key: any constant the project owns ("mighty" + "mig" in ASCII)
MIGRATION_LOCK: Final = 0x6D69676874796D69
_FILE = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")


def migrations() -> list[tuple[int, str, str]]:
    """Every migration file as (version, name, SQL), by version."""
    found = []
    for entry in resources.files("services.archive").joinpath("migrations").iterdir():
        match = _FILE.fullmatch(entry.name)
        if match:
            found.append((int(match.group(1)), match.group(2), entry.read_text(encoding="utf-8")))
    found.sort()
    versions = [version for version, _, _ in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"two migration files share a version: {versions}")
    return found


def migrate(conn: psycopg.Connection[tuple[object, ...]]) -> list[int]:
    """Apply the migrations not yet recorded; the versions applied now."""
    applied_now: list[int] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
        for version, name, sql in migrations():
            if version in done:
                continue
            conn.execute(sql.encode())  # several statements, no parameters: the simple protocol
            conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (version, name))
            applied_now.append(version)
    if applied_now:
        log.info("archive schema migrated", versions=applied_now)
    return applied_now


def applied(conn: psycopg.Connection[tuple[object, ...]]) -> list[int]:
    """The versions recorded (none before the first ``migrate``)."""
    with conn.transaction():
        exists = conn.execute("SELECT to_regclass('schema_migrations')").fetchone()
        if exists is None or exists[0] is None:
            return []
        return [row[0] for row in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]  # type: ignore[misc]

"""The archive: closed tables moved from Redis into PostgreSQL (docs/archive.md).

| module | holds |
|---|---|
| ``migrations/*.sql``, ``migrate.py`` | the schema, versioned SQL files and their runner |
| ``postgres.py`` | ``PostgresArchive``: write a table in one transaction, read it back |
| ``keys.py`` | the index entry and the to-do list in Redis |
| ``summary.py`` | a table's row and its hands' rows, from its events |
| ``reads.py`` | ``ArchivedEventStore``: reads that fall through to the archive |
| ``worker.py`` | ``ArchiveWorker``: discover, copy, verify, delete |
| ``runtime.py`` | a private PostgreSQL server for tests and benchmarks |
"""

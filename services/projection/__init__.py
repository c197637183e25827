"""Projection workers: read the partition feeds with consumer groups, fold the events
into views, ledgers and the lobby directory, store each batch with its checkpoint in one
atomic step (docs/workers.md)."""

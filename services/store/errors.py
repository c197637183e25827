"""Typed errors of the event store.

They extend the domain's ``MightyError`` so a gateway maps every refusal, from the
rules or from the store, to a response in one place (``code`` + ``message``).
"""

from __future__ import annotations

from domain.errors import MightyError


class StoreError(MightyError):
    """Base of every error the event store raises."""

    code = "store_error"


class VersionConflict(StoreError):
    """The table moved on since the caller read it: reload, decide again, retry."""

    code = "version_conflict"

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(f"expected the table at version {expected}, it is at {actual}")
        self.expected = expected
        self.actual = actual


class StoreUnavailable(StoreError):
    """Redis could not be reached (after the client's retries) or refused to write."""

    code = "store_unavailable"


class NotReplicated(StoreUnavailable):
    """The ``replicated`` durability profile: the append is stored on the primary, but no
    replica acknowledged it in time, so it is not acknowledged (a failover now could
    lose it). Retrying with the same command id is safe: the store answers the first
    outcome and waits for a replica again (docs/reliability.md)."""

    def __init__(self, waited_ms: int, replicas: int = 0) -> None:
        super().__init__(
            f"the command is stored on the primary but {replicas} replica(s) acknowledged it within "
            f"{waited_ms} ms; it is not acknowledged: retry with the same command id (it is not applied twice)")
        self.waited_ms = waited_ms
        self.replicas = replicas


class BadTableId(StoreError):
    code = "bad_table_id"


class BadCommandId(StoreError):
    code = "bad_command_id"


class BadAppend(StoreError):
    """An append the store can never accept as given (no events, too many, bad hash)."""

    code = "bad_append"


class PayloadTooLarge(StoreError):
    code = "payload_too_large"


class ChainMismatch(StoreError):
    """The caller's head hash is not the table's: its cached chain is wrong or was forged."""

    code = "chain_mismatch"


class CommandIdReused(StoreError):
    """The command id was used before for another command: choose a new id."""

    code = "command_id_reused"


class StoreCorrupt(StoreError):
    """Stored data breaks an invariant (a key of the wrong type, a broken hash chain)."""

    code = "store_corrupt"

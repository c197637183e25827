"""Typed errors of the event store.

They extend the domain's ``MightyError`` so a gateway maps every refusal, from the
rules or from the store, to a response in one place (``code`` + ``message``).
"""

from __future__ import annotations

import os
from typing import Final

import redis

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


# ---------------------------------------------------------------- outages, in one place

# The first word of an error reply by which Redis says "not now": it is loading its data
# (LOADING), cannot persist (MISCONF: a failed background save or AOF write, a full disk),
# is at its memory limit (OOM), is a replica or was made one (READONLY, UNBLOCKED), runs a
# slow script (BUSY), or is a cluster failing over or moving slots (TRYAGAIN, MASTERDOWN,
# CLUSTERDOWN, MOVED, ASK), or misses the replicas a write asks for (NOREPLICAS). Nothing
# is wrong with the data: the same call succeeds later. docs/reliability.md, "Redis loading its data, or refusing writes".
TRANSIENT_REPLIES: Final = frozenset({
    "LOADING", "MISCONF", "OOM", "READONLY", "UNBLOCKED", "BUSY", "TRYAGAIN", "MASTERDOWN",
    "CLUSTERDOWN", "MOVED", "ASK", "NOREPLICAS",
})
# What redis-py raises, or hands back as a reply, for a server it cannot use now: no
# connection, no answer in time (BusyLoadingError is a ConnectionError), no primary for a
# slot (SlotNotCoveredError is no RedisError), a cluster failing over.
_TRANSIENT_CLASSES: Final = (
    redis.ConnectionError, redis.TimeoutError, redis.exceptions.SlotNotCoveredError,
    redis.exceptions.ClusterDownError, redis.exceptions.TryAgainError, redis.exceptions.AskError,
    redis.exceptions.ReadOnlyError, redis.exceptions.OutOfMemoryError,
    StoreUnavailable, ConnectionError, TimeoutError,
)


def reply_code(error: BaseException) -> str:
    """The first word of a Redis error reply (``MISCONF``, ``WRONGTYPE``...), as Redis
    sent it: redis-py strips it from the message of the errors it has a class for and
    keeps it as ``status_code``."""
    status = getattr(error, "status_code", None)
    if isinstance(status, str) and status:
        return status
    return str(error).split(" ", 1)[0]


def is_transient(error: BaseException) -> bool:
    """Whether a Redis error, raised or handed back as a reply (a pipeline's, a hiredis
    reader's), is an outage: the call may succeed if made again later, so the API answers
    503 ``unavailable``, a worker waits and retries. Anything else (``WRONGTYPE``, a
    script's own error, a reply the code cannot read) is not: that is what ``mighty
    verify`` would look into, never to be retried away."""
    return (isinstance(error, _TRANSIENT_CLASSES) or reply_code(error) in TRANSIENT_REPLIES
            or is_connection_torn_down(error))


def is_connection_torn_down(error: BaseException) -> bool:
    """redis-py's own failure on a connection torn down under it: its async cluster
    pipeline, when a failover closes a node's connection mid-call, reads the connection's
    absent writer (``AttributeError: 'NoneType' object has no attribute 'writelines'``).
    An outage said badly, not a fault of the call: raised from within redis-py itself."""
    if not isinstance(error, AttributeError) or "'NoneType' object" not in str(error):
        return False
    frame = error.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    return frame is not None and f"{os.sep}redis{os.sep}" in frame.tb_frame.f_code.co_filename


def unavailable(error: BaseException) -> StoreUnavailable:
    """The ``StoreUnavailable`` an outage is said as, with what Redis said."""
    if isinstance(error, StoreUnavailable):
        return error
    code = reply_code(error)
    why = _WHY.get(code, "Redis is unreachable or cannot serve the call now")
    return StoreUnavailable(f"{why}: {error}")


_WHY: Final = {
    "LOADING": "Redis is loading its data",
    "MISCONF": "Redis cannot persist and refuses writes (a failed save, a full disk?)",
    "OOM": "Redis is out of memory and refused the write",
    "READONLY": "Redis refused the write (read-only replica)",
    "UNBLOCKED": "Redis failed over while the command waited",
    "BUSY": "Redis is busy running a script",
    "NOREPLICAS": "Redis has too few replicas for a write",
}

"""What a redis-py error becomes in the store (services/store/redis_store.store_error): an
outage the caller retries with the same command id (``StoreUnavailable``, the API's 503
``unavailable``), or a refusal nobody can retry away (``StoreCorrupt``)."""

from __future__ import annotations

import asyncio

import pytest
import redis
from redis._parsers.encoders import Encoder
from redis.asyncio.connection import Connection

from services.gateway.errors import as_api_error
from services.store.errors import (
    StoreCorrupt,
    StoreUnavailable,
    is_connection_torn_down,
    is_transient,
)
from services.store.redis_store import store_error


@pytest.mark.parametrize("error", [
    redis.ConnectionError("Connection refused"),
    redis.TimeoutError("Timeout reading from socket"),
    redis.exceptions.ReadOnlyError("You can't write against a read only replica."),
    redis.exceptions.OutOfMemoryError("command not allowed when used memory > 'maxmemory'."),
    redis.exceptions.ClusterDownError("The cluster is down"),
    redis.exceptions.TryAgainError("Multiple keys request during rehashing of slot"),
    # the replicated profile's WAIT on a primary that became a replica mid-failover
    redis.ResponseError("UNBLOCKED force unblock from blocking operation, instance state changed "
                        "(master -> replica?)"),
], ids=lambda error: type(error).__name__ + ":" + str(error)[:12])
def test_an_outage_or_a_failover_is_unavailable_and_retryable(error: Exception) -> None:
    assert isinstance(store_error(error), StoreUnavailable)


def test_any_other_refusal_is_corrupt_and_says_what_redis_said() -> None:
    found = store_error(redis.ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"))
    assert isinstance(found, StoreCorrupt)
    assert "WRONGTYPE" in str(found)


# Redis's transient states, as redis-py hands them over: raised, or returned as a reply
# (a pipeline with raise_on_error=False, hiredis's reader: LOADING comes as a
# BusyLoadingError, a ConnectionError, not a ResponseError). One classification for every
# path: services/store/errors.py is_transient.
TRANSIENT = [
    redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory", status_code="LOADING"),
    redis.ResponseError("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist"),
    redis.ResponseError("MISCONF Errors writing to the AOF file: No space left on device"),
    redis.exceptions.OutOfMemoryError("command not allowed when used memory > 'maxmemory'.", status_code="OOM"),
    redis.exceptions.ReadOnlyError("You can't write against a read only replica.", status_code="READONLY"),
    redis.ResponseError("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT."),
    redis.exceptions.TryAgainError("Multiple keys request during rehashing of slot", status_code="TRYAGAIN"),
    redis.exceptions.MasterDownError("Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
                                     status_code="MASTERDOWN"),
    redis.exceptions.ClusterDownError("The cluster is down", status_code="CLUSTERDOWN"),
    redis.ResponseError("NOREPLICAS Not enough good replicas to write."),
    redis.ConnectionError("Connection refused"),
    redis.TimeoutError("Timeout reading from socket"),
]


@pytest.mark.parametrize("error", TRANSIENT, ids=lambda error: type(error).__name__ + ":" + str(error)[:12])
def test_every_transient_redis_state_is_an_outage_in_the_store_and_the_api(error: Exception) -> None:
    assert is_transient(error)
    assert isinstance(store_error(error), StoreUnavailable)
    refused = as_api_error(error)
    assert (refused.code, refused.status) == ("unavailable", 503)


@pytest.mark.parametrize("error", [
    redis.ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"),
    redis.ResponseError("BUSYGROUP Consumer Group name already exists"),
    redis.ResponseError("BUSYKEY Target key name already exists."),
    redis.ResponseError("ERR Error running script (call to f_x): @user_script:1: boom"),
], ids=lambda error: str(error)[:12])
def test_a_refusal_that_no_retry_mends_is_not_an_outage(error: Exception) -> None:
    assert not is_transient(error)
    assert isinstance(store_error(error), StoreCorrupt)
    assert as_api_error(error).status == 500


def test_a_misconf_reply_to_an_append_script_is_an_outage_not_corruption() -> None:
    # a script's write refused: Redis names the script after the reply's code
    reply = redis.ResponseError("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
                                "persist to disk. script: 8b2ae6dd76cda7fc3e27f97431ae27d7b08a221d, on @user_script:1.")
    assert isinstance(store_error(reply), StoreUnavailable)


def test_a_write_on_a_connection_torn_down_is_an_outage_however_redis_py_says_it() -> None:
    # The async cluster pipeline met this mid-failover: the node's connection closed under
    # it. redis-py before 8.2 wrote to the absent writer (an AttributeError from inside
    # redis-py); 8.2 raises ConnectionError. Either way the API answers 503.
    torn = Connection()  # never connected: no writer, as after a disconnect
    try:
        asyncio.run(torn._send_packed_command([b"*1\r\n$4\r\nPING\r\n"]))
    except (AttributeError, redis.ConnectionError) as error:
        tripped: Exception = error
    else:
        raise AssertionError("redis-py wrote to a connection that has no writer")
    assert is_transient(tripped)
    answer = as_api_error(tripped)
    assert (answer.status, answer.code) == (503, "unavailable"), answer


def test_redis_py_tripping_on_an_absent_object_is_an_outage_and_only_that() -> None:
    # The shape of the old failure, made by redis-py itself on any version: an attribute
    # read on None in redis-py's own code.
    try:
        Encoder.encode(None, "x")  # type: ignore[arg-type]
    except AttributeError as error:
        tripped = error
    else:
        raise AssertionError("redis-py read an attribute of None")
    assert is_connection_torn_down(tripped) and is_transient(tripped)
    answer = as_api_error(tripped)
    assert (answer.status, answer.code) == (503, "unavailable"), answer
    ours = AttributeError("'NoneType' object has no attribute 'writelines'")  # raised here, not in redis-py
    try:
        raise ours
    except AttributeError as error:
        assert not is_connection_torn_down(error) and not is_transient(error)

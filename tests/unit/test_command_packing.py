"""Commands packed by hiredis in one call (services/store/packing.py): the same bytes on
the wire as redis-py's own packer, and redis-py's way for what hiredis does not take."""

from __future__ import annotations

from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from hypothesis import given
from hypothesis import strategies as st

from services.store.packing import FastPacker, packing_fast


def _redis_py(*args: Any) -> bytes:
    return b"".join(bytes(chunk) for chunk in redis.Connection().pack_command(*args))


def _fast(*args: Any) -> bytes:
    return b"".join(bytes(chunk) for chunk in packing_fast(redis.Connection)().pack_command(*args))


_ARGUMENT = st.one_of(st.text(max_size=40), st.binary(max_size=40), st.integers(),
                      st.floats(allow_nan=False, allow_infinity=False))


@given(st.lists(_ARGUMENT, max_size=12))
def test_a_command_is_packed_to_the_same_bytes_as_redis_py_packs_it(arguments: list[Any]) -> None:
    assert _fast("EVALSHA", *arguments) == _redis_py("EVALSHA", *arguments)


@pytest.mark.parametrize("args", [
    ("XINFO STREAM", "feed"),  # a command name of two words: redis-py splits it
    ("SET", "k", bytearray(b"ab")),
    ("SET", "k", memoryview(b"ab")),
    ("SET", "k", "é"),
])
def test_what_hiredis_does_not_take_as_it_is_goes_redis_pys_way(args: tuple[Any, ...]) -> None:
    assert _fast(*args) == _redis_py(*args)


@pytest.mark.parametrize("value", [True, None])
def test_an_argument_redis_py_refuses_is_refused_with_its_error(value: Any) -> None:
    with pytest.raises(redis.DataError):
        packing_fast(redis.Connection)().pack_command("SET", "k", value)


def test_both_clients_connections_pack_with_it() -> None:
    assert isinstance(packing_fast(redis.Connection)()._command_packer, FastPacker)  # noqa: SLF001
    assert isinstance(packing_fast(aioredis.Connection)()._command_packer, FastPacker)  # noqa: SLF001


def test_the_stores_clients_pack_with_it() -> None:
    from services.store.async_redis_store import connect_async
    from services.store.redis_store import connect

    sync_client: Any = connect("redis://127.0.0.1:1")
    async_client: Any = connect_async("redis://127.0.0.1:1")
    assert issubclass(sync_client.connection_pool.connection_class, redis.Connection)
    assert isinstance(sync_client.connection_pool.make_connection()._command_packer, FastPacker)  # noqa: SLF001
    assert isinstance(async_client.connection_pool.make_connection()._command_packer, FastPacker)  # noqa: SLF001

"""The replicated durability profile's wait, on a scripted connection: WAITAOF where the
server has it, WAIT where it answers ``unknown command`` (Redis before 7.2, as on the
development machine), and which answers count as acknowledged. The real thing, on a
local cluster: tests/integration/test_cluster_durability.py."""

from __future__ import annotations

import asyncio
from typing import Any

import fakeredis
import pytest
import redis

from services.store import EMPTY_HEAD, AsyncRedisEventStore, KeySpace, RedisEventStore
from services.store.errors import NotReplicated
from services.store.keys import fence_of
from services.store.redis_store import append_call

SPACE = KeySpace(16)
OK = [b"ok", 1, b"a" * 64]


class ScriptedConnection:
    """Answers each command sent with the next scripted reply (an exception instance is
    raised as the server's error reply would be)."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.sent: list[list[bytes]] = []

    def send_packed_command(self, packed: list[bytes], check_health: bool = True) -> None:
        self.sent.append(packed)

    def read_response(self) -> Any:
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def store(**options: Any) -> RedisEventStore:
    return RedisEventStore(fakeredis.FakeRedis(protocol=2), keys=SPACE, wait_replicas=1, **options)


def call() -> tuple[list[str], list[Any]]:
    return append_call(SPACE, "t1", [b"e"], EMPTY_HEAD, "c1", b"{}", 0)


def sent_commands(connection: ScriptedConnection) -> list[bytes]:
    return [part.split(b"\r\n")[2] for packed in connection.sent for part in packed]


def test_an_append_is_followed_by_its_fence_and_a_waitaof_on_the_same_connection() -> None:
    replicated = store()
    keys, args = call()
    connection = ScriptedConnection(OK, 1, [0, 1])
    assert replicated._send(connection, keys, args) == OK  # noqa: SLF001
    assert sent_commands(connection) == [b"EVALSHA", b"INCR", b"WAITAOF"]
    assert fence_of(keys[0]).encode() in connection.sent[0][1]
    assert replicated.waitaof is True


def test_a_server_without_waitaof_is_asked_wait_once_and_from_then_on() -> None:
    replicated = store()
    keys, args = call()
    old = ScriptedConnection(OK, 1, redis.ResponseError("unknown command 'WAITAOF', with args beginning with: '0'"), 1)
    assert replicated._send(old, keys, args) == OK  # noqa: SLF001
    assert sent_commands(old) == [b"EVALSHA", b"INCR", b"WAITAOF", b"WAIT"]
    assert replicated.waitaof is False
    again = ScriptedConnection(OK, 1, 1)
    replicated._send(again, keys, args)  # noqa: SLF001
    assert sent_commands(again) == [b"EVALSHA", b"INCR", b"WAIT"]


@pytest.mark.parametrize("waited", [0, [1, 0]])
def test_an_append_no_replica_acknowledged_is_not_replicated(waited: Any) -> None:
    keys, args = call()
    with pytest.raises(NotReplicated) as refused:
        store(wait_timeout_ms=250)._send(ScriptedConnection(OK, 1, waited), keys, args)  # noqa: SLF001
    assert refused.value.code == "store_unavailable" and "250 ms" in refused.value.message


def test_a_duplicate_waits_for_a_replica_too_and_a_refusal_does_not() -> None:
    keys, args = call()
    duplicate = [b"dup", b"{}", 1, b"a" * 64]
    with pytest.raises(NotReplicated):
        store()._send(ScriptedConnection(duplicate, 1, 0), keys, args)  # noqa: SLF001
    conflict = [b"conflict", 3]
    assert store()._send(ScriptedConnection(conflict, 1, 0), keys, args) == conflict  # noqa: SLF001


def test_without_the_profile_an_append_is_one_command() -> None:
    plain = RedisEventStore(fakeredis.FakeRedis(protocol=2), keys=SPACE)
    keys, args = call()
    connection = ScriptedConnection(OK)
    assert plain._send(connection, keys, args) == OK  # noqa: SLF001
    assert sent_commands(connection) == [b"EVALSHA"]


def test_the_async_store_settles_a_pipeline_by_its_one_wait() -> None:
    async def scenario() -> list[Any]:
        replicated = AsyncRedisEventStore(fakeredis.FakeAsyncRedis(protocol=2), keys=SPACE, wait_replicas=1)
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in range(3)]
        held = [(([], [], futures[0]), OK), (([], [], futures[1]), [b"conflict", 2]),
                (([], [], futures[2]), [b"dup", b"{}", 1, b"a" * 64])]
        replicated._settle_replicated(held, [1, 0])  # type: ignore[arg-type]  # noqa: SLF001
        return [f.exception() or f.result() for f in futures]

    first, refusal, duplicate = asyncio.run(scenario())
    assert isinstance(first, NotReplicated) and isinstance(duplicate, NotReplicated)
    assert refusal == [b"conflict", 2]

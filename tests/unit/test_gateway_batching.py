"""What the gateway saves per command without changing an answer: Redis commands of one
turn of the event loop in one pipeline (``Coalesced``), and a command at a playing table
taking its seat from the cached state, still decided on the store's state when the
cache is behind."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import fakeredis
import pytest
import redis

from domain.table import Resign, Submission
from services.gateway.backend import Coalesced
from tests.unit.gateway_helpers import a_legal_command, auth, full_table, gateway, sync_wiring


class _CountingClient:
    """A fakeredis client that counts the pipelines sent through it."""

    def __init__(self) -> None:
        self.client = fakeredis.FakeAsyncRedis(protocol=2)
        self.pipelines = 0

    def pipeline(self, transaction: bool = False) -> Any:
        self.pipelines += 1
        return self.client.pipeline(transaction=transaction)


def test_commands_asked_for_in_one_turn_go_in_one_pipeline_and_each_caller_gets_its_replies() -> None:
    async def scenario() -> tuple[Any, int]:
        counting = _CountingClient()
        await counting.client.set("k1", b"one")
        batch = Coalesced(counting)
        answers = await asyncio.gather(
            batch.call(("GET", "k1")),
            batch.call(("INCR", "n"), ("EXPIRE", "n", 10)),
            batch.call(("GET", "missing")),
        )
        return answers, counting.pipelines

    answers, pipelines = asyncio.run(scenario())
    assert answers == [[b"one"], [1, True], [None]]
    assert pipelines == 1


def test_an_error_reply_fails_only_the_caller_whose_command_it_answers() -> None:
    async def scenario() -> Any:
        counting = _CountingClient()
        await counting.client.set("text", b"not a number")
        batch = Coalesced(counting)
        return await asyncio.gather(batch.call(("INCR", "text")), batch.call(("INCR", "n")),
                                    return_exceptions=True)

    wrong, fine = asyncio.run(scenario())
    assert isinstance(wrong, redis.ResponseError)
    assert fine == [1]


def test_a_connection_failure_fails_every_caller_of_the_pipeline() -> None:
    class Broken:
        def pipeline(self, transaction: bool = False) -> Any:
            class Pipe:
                def execute_command(self, *args: Any) -> None:
                    pass

                async def execute(self, raise_on_error: bool = True) -> Any:
                    raise redis.ConnectionError("gone")

            return Pipe()

    async def scenario() -> Any:
        batch = Coalesced(Broken())
        return await asyncio.gather(batch.call(("GET", "a")), batch.call(("GET", "b")), return_exceptions=True)

    assert all(isinstance(e, redis.ConnectionError) for e in asyncio.run(scenario()))


def test_a_shared_read_is_sent_once_a_turn_and_one_asker_cancelled_cancels_no_other() -> None:
    async def scenario() -> tuple[Any, Any, list[bytes | None], int]:
        counting = _CountingClient()
        await counting.client.set("d", b"doc")
        sent: list[tuple[Any, ...]] = []
        real = counting.pipeline

        def pipeline(transaction: bool = False) -> Any:
            pipe = real(transaction)
            execute_command = pipe.execute_command

            def spy(*args: Any) -> Any:
                sent.append(args)
                return execute_command(*args)

            pipe.execute_command = spy
            return pipe

        counting.pipeline = pipeline  # type: ignore[method-assign]
        batch = Coalesced(counting)
        first = asyncio.ensure_future(batch.call(("GET", "d"), shared=True))
        second = asyncio.ensure_future(batch.call(("GET", "d"), shared=True))
        third = asyncio.ensure_future(batch.call(("GET", "d"), shared=True))
        await asyncio.sleep(0)  # all three have asked; the pipeline is not sent yet
        first.cancel()
        done: Any = await asyncio.gather(first, second, third, return_exceptions=True)
        return done[0], done[1], [done[2][0]], len(sent)

    first, second, third, sent = asyncio.run(scenario())
    assert isinstance(first, asyncio.CancelledError)
    assert second == [b"doc"] and third == [b"doc"]
    assert sent == 1


@pytest.fixture
def client() -> Any:
    with gateway(secret="unit-secret", rate_commands=1000) as client:
        yield client


def test_a_command_on_a_cached_state_that_is_behind_is_decided_on_the_stores_state(client: Any) -> None:
    """Another process closed the table after this gateway cached it as playing: the
    command is refused as at a closed table, and nothing is appended."""
    table, seated = full_table(client)
    public = client.get(f"/api/v1/tables/{table}/view").json()
    acting = seated[public["to_act"]]
    view = client.get(f"/api/v1/tables/{table}/view", headers=auth(acting)).json()
    resigning = next(s for s, p in enumerate(seated) if p is not acting)
    wiring = sync_wiring(client)
    wiring.handler.handle(table, Submission(Resign(seat=resigning), seated[resigning]["player"]),
                          command_id="elsewhere-resign")
    events = len(wiring.store.read(table))
    answer = client.post(f"/api/v1/tables/{table}/commands",
                         json={"id": "late", "command": a_legal_command(view, random.Random(4))},
                         headers=auth(acting))
    assert answer.status_code == 409 and answer.json()["code"] == "table_closed", answer.text
    assert len(wiring.store.read(table)) == events


class _RecordingClient(_CountingClient):
    """Counts pipelines and records the name of every command sent."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    def pipeline(self, transaction: bool = False) -> Any:
        pipe = super().pipeline(transaction)
        run = pipe.execute_command

        def recorded(*args: Any, **options: Any) -> Any:
            self.sent.append(str(args[0]))
            return run(*args, **options)

        pipe.execute_command = recorded
        return pipe


SCRIPT = "return redis.call('INCRBY', KEYS[1], ARGV[1])"


def test_a_script_goes_by_its_digest_and_is_sent_whole_only_when_redis_lacks_it() -> None:
    async def scenario() -> tuple[list[Any], list[str], int]:
        recording = _RecordingClient()
        batch = Coalesced(recording)
        first = await batch.call(("EVAL", SCRIPT, 1, "n", 2))
        second = await asyncio.gather(batch.call(("EVAL", SCRIPT, 1, "n", 3)), batch.call(("GET", "n")))
        await recording.client.script_flush()  # as after a restart or a failover
        third = await batch.call(("EVAL", SCRIPT, 1, "n", 4))
        return [first, second, third], recording.sent, recording.pipelines

    answers, sent, pipelines = asyncio.run(scenario())
    assert answers == [[2], [[5], [b"5"]], [9]]
    # unknown at first: by digest, then whole; known: by digest alone; flushed: whole again
    assert sent == ["EVALSHA", "EVAL", "EVALSHA", "GET", "EVALSHA", "EVAL"]
    assert pipelines == 5

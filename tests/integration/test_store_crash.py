"""Kill redis-server with SIGKILL mid-run and restart it on the same AOF.

Every command a writer saw acknowledged must still be there afterwards, once, at the
version it was acknowledged at; and the writers, with the clients they already had,
carry on by themselves once the server is back.
"""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter as Tally
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from services.commands.handler import CommandHandler
from services.redis_runtime import PrivateRedis
from services.store import (
    EMPTY_HEAD,
    RedisEventStore,
    StoreUnavailable,
    connect,
)
from services.store.base import verify_chain
from tests.counter import Add, CounterDecider, Open

pytestmark = pytest.mark.integration

WRITERS = 6
ACKS_AFTER_RESTART = 25


@dataclass
class Writer:
    index: int
    acked: dict[str, int] = field(default_factory=dict)
    acked_after_restart: int = 0
    unavailable: int = 0
    error: BaseException | None = None

    @property
    def table(self) -> str:
        return f"crash-{self.index}"


def write_until(
    server: PrivateRedis, writer: Writer, restarted: threading.Event, stop: threading.Event
) -> None:
    client = connect(server.url, retries=3)  # the same client before and after the crash
    handler = CommandHandler(RedisEventStore(client), CounterDecider())
    n = 0
    try:
        while not stop.is_set():
            cid = f"{writer.table}-{n}"
            try:
                result = handler.handle(writer.table, Add(0, 1), command_id=cid)
            except StoreUnavailable:
                writer.unavailable += 1  # unknown outcome: send the same command id again
                time.sleep(0.02)
                continue
            writer.acked[cid] = result.version
            writer.acked_after_restart += restarted.is_set()
            n += 1
    except BaseException as error:  # noqa: BLE001 - the test reports it
        writer.error = error
    finally:
        client.close()


def wait_for(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.mark.parametrize("fsync", ["everysec", "always"])
def test_acknowledged_commands_survive_a_sigkill_and_clients_recover(
    redis_factory: Callable[..., PrivateRedis], fsync: str
) -> None:
    server = redis_factory(appendonly=True, appendfsync=fsync)
    setup = CommandHandler(RedisEventStore(connect(server.url)), CounterDecider())
    writers = [Writer(i) for i in range(WRITERS)]
    for writer in writers:
        setup.handle(writer.table, Open(1), command_id="open")
    restarted, stop = threading.Event(), threading.Event()
    threads = [
        threading.Thread(target=write_until, args=(server, w, restarted, stop)) for w in writers
    ]
    for thread in threads:
        thread.start()

    wait_for(lambda: all(len(w.acked) >= 20 for w in writers), timeout=20)
    server.kill(signal.SIGKILL)
    acked_before_crash = sum(len(w.acked) for w in writers)
    time.sleep(0.3)
    server.start()  # same dir, port and AOF
    restarted.set()
    wait_for(
        lambda: all(w.acked_after_restart >= ACKS_AFTER_RESTART or w.error for w in writers), 30
    )
    stop.set()
    for thread in threads:
        thread.join(timeout=30)

    assert [w.error for w in writers] == [None] * WRITERS
    store = RedisEventStore(connect(server.url))
    for writer in writers:
        events = store.read(writer.table)
        assert verify_chain(EMPTY_HEAD, events) == store.head(writer.table)
        assert [e.version for e in events] == list(range(1, len(events) + 1))
        stored = Tally(e.command_id for e in events)
        assert stored == Tally({"open": 1, **{cid: 1 for cid in writer.acked}})
        assert all(events[v - 1].command_id == cid for cid, v in writer.acked.items())
    assert acked_before_crash >= 20 * WRITERS


def test_a_server_that_stays_down_is_a_typed_error_and_the_client_recovers(
    redis_server: PrivateRedis,
) -> None:
    client = connect(redis_server.url, retries=1)
    handler = CommandHandler(RedisEventStore(client), CounterDecider())
    handler.handle("t1", Open(2), command_id="open")
    redis_server.kill(signal.SIGKILL)
    with pytest.raises(StoreUnavailable) as caught:
        handler.handle("t1", Add(0, 1), command_id="c1")
    assert caught.value.as_dict()["code"] == "store_unavailable"
    redis_server.start()
    assert handler.handle("t1", Add(0, 1), command_id="c1").version == 2  # same client
    assert [e.command_id for e in RedisEventStore(client).read("t1")] == ["open", "c1"]

"""The bot worker as a process, with the views and ledger workers as processes, on a
private redis-server: tables of bots play on by themselves."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from domain.codec import decode_event
from domain.table import CreateTable, JoinSeat, Submission, TableClosed, TurnTimedOut
from projections.docs import decode
from projections.views import view_name
from services.app.steps import service_steps
from services.bootstrap import Wiring, wire
from services.redis_runtime import PrivateRedis
from services.settings import Settings
from services.store import connect


@pytest.fixture
def wiring(redis_server: PrivateRedis) -> Iterator[Wiring]:
    wired = wire(connect(redis_server.url), Settings(redis_url=redis_server.url, namespace="bots"))
    try:
        yield wired
    finally:
        wired.close()


@pytest.fixture
def workers(wiring: Wiring, tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """The views and ledger workers and two bot workers, as processes."""
    env = {**os.environ, **wiring.settings.as_env(), "MIGHTY_LOG_FORMAT": "json"}
    started = []
    for n, kind in enumerate(["views", "ledger", "bots", "bots"]):
        log = open(tmp_path / f"{kind}-{n}.log", "wb")  # noqa: SIM115 - closed with the process
        started.append(subprocess.Popen([sys.executable, "-m", "services.cli", "worker", kind],
                                        stdout=log, stderr=log, env=env))
        log.close()
    try:
        yield started
    finally:
        for process in started:
            process.terminate()
        for process in started:
            assert process.wait(timeout=20) in (0, -15)


def bot_table(wiring: Wiring, table_id: str, variant: str, hands: int) -> None:
    """A table every seat of which a bot holds, started and dealt as the gateway does."""
    players = {"mighty-5": 5, "mitigati": 3}[variant]
    bots = {str(seat): "beginner" for seat in range(players)}
    handler = wiring.handler
    handler.handle(table_id, Submission(CreateTable(variant=variant, hands=hands, bots=bots), "b-owner"),
                   command_id="create")
    for seat in range(players):
        handler.handle(table_id, Submission(JoinSeat(seat=seat), f"b-{table_id}-{seat}"), command_id=f"bot-{seat}")
    state, _ = handler.state_of(table_id)
    service_steps(handler, table_id, state)


def wait_for(condition: object, workers: list[subprocess.Popen[bytes]], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        assert all(p.poll() is None for p in workers), "a worker exited"
        time.sleep(0.2)
    raise AssertionError("timed out")


def test_five_bots_play_a_ten_hand_match_to_its_end_and_the_ledger_is_the_hands_scores(
    wiring: Wiring, workers: list[subprocess.Popen[bytes]]
) -> None:
    bot_table(wiring, "botmatch", "mighty-5", hands=10)

    def closed() -> bool:
        return wiring.handler.state_of("botmatch")[0].status == "closed"

    wait_for(closed, workers, timeout_s=240)
    events = [decode_event(e.data) for e in wiring.store.read("botmatch")]
    assert isinstance(events[-1], TableClosed) and events[-1].reason == "match_over"
    scored = [e for e in events if type(e).__name__ == "HandScored"]
    assert len(scored) == 10
    totals = [sum(e.scores[s] for e in scored) for s in range(5)]  # type: ignore[attr-defined]

    def ledger_caught_up() -> bool:
        ledger = wiring.readers.table_ledger("botmatch")
        return ledger is not None and len(ledger.hands) == 10

    wait_for(ledger_caught_up, workers, timeout_s=60)
    ledger = wiring.readers.table_ledger("botmatch")
    assert ledger is not None
    assert list(ledger.totals) == totals
    assert [list(h.scores) for h in ledger.hands] == [list(e.scores) for e in scored]  # type: ignore[attr-defined]
    # each move appended once, though two bot workers played every turn: a command's
    # events are one run of versions, so an id met again after another id is a second append
    runs = [e.command_id for e in wiring.store.read("botmatch")]
    appends = [cid for i, cid in enumerate(runs) if i == 0 or runs[i - 1] != cid]
    moves = [cid for cid in appends if cid.startswith("turn-")]
    assert moves and len(moves) == len(set(moves))


def test_three_bots_finish_a_mitigati_hand(wiring: Wiring, workers: list[subprocess.Popen[bytes]]) -> None:
    bot_table(wiring, "botmiti", "mitigati", hands=1)

    def closed() -> bool:
        return wiring.handler.state_of("botmiti")[0].status == "closed"

    wait_for(closed, workers, timeout_s=120)
    state, _ = wiring.handler.state_of("botmiti")
    assert state.hands_scored == 1


@pytest.fixture
def timed_workers(wiring: Wiring, tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    env = {**os.environ, **wiring.settings.as_env(), "MIGHTY_LOG_FORMAT": "json"}
    started = []
    for n, kind in enumerate(["views", "bots", "timers", "timers"]):
        log = open(tmp_path / f"{kind}-{n}.log", "wb")  # noqa: SIM115 - closed with the process
        started.append(subprocess.Popen([sys.executable, "-m", "services.cli", "worker", kind],
                                        stdout=log, stderr=log, env=env))
        log.close()
    try:
        yield started
    finally:
        for process in started:
            process.terminate()
        for process in started:
            assert process.wait(timeout=20) in (0, -15)


def test_a_seat_that_lets_its_turn_time_out_is_played_by_the_service_and_the_stream_says_so(
    wiring: Wiring, timed_workers: list[subprocess.Popen[bytes]]
) -> None:
    handler = wiring.handler
    bots = {str(seat): "beginner" for seat in range(1, 5)}
    handler.handle("timed", Submission(CreateTable(variant="mighty-5", turn_seconds=1, bots=bots), "ana"),
                   command_id="create")
    for seat in range(5):
        player = "ana" if seat == 0 else f"b-{seat}"
        handler.handle("timed", Submission(JoinSeat(seat=seat), player), command_id=f"join-{seat}")
    state, _ = handler.state_of("timed")
    service_steps(handler, "timed", state)
    started = time.monotonic()

    def timed_out_twice() -> bool:
        events = [decode_event(e.data) for e in wiring.store.read("timed")]
        return sum(isinstance(e, TurnTimedOut) and e.seat == 0 for e in events) >= 2

    wait_for(timed_out_twice, timed_workers, timeout_s=90)
    assert time.monotonic() - started >= 1.0  # not before the deadline
    stored = wiring.store.read("timed")
    events = [decode_event(e.data) for e in stored]
    for i, event in enumerate(events):
        if isinstance(event, TurnTimedOut):
            # the person's seat; a bot's only when the loaded machine made it slower than the
            # one-second turn (counted from the append that began the turn)
            assert (event.seat == 0 or str(event.seat) in bots) and event.reason == "timeout"
            move = events[i + 1]
            assert getattr(move, "seat", None) == event.seat and stored[i + 1].command_id == stored[i].command_id
            assert stored[i].command_id.startswith("timeout-")
    # two timer workers, each timeout appended once
    ids = [e.command_id for e, ev in zip(stored, events, strict=True) if isinstance(ev, TurnTimedOut)]
    assert len(ids) == len(set(ids))


def test_a_timed_turn_ends_at_the_deadline_its_views_showed_from_the_append_that_began_it(
    wiring: Wiring, timed_workers: list[subprocess.Popen[bytes]]
) -> None:
    """Every view of a timed turn carries its end (``deadline_ms``: the append time of the
    event that began the turn plus ``turn_seconds``), written with the view itself, so no
    push goes out without it; the service plays the seat at that instant, not before."""
    handler = wiring.handler
    bots = {str(seat): "beginner" for seat in range(1, 5)}
    handler.handle("clock", Submission(CreateTable(variant="mighty-5", turn_seconds=2, bots=bots), "ana"),
                   command_id="create")
    for seat in range(5):
        handler.handle("clock", Submission(JoinSeat(seat=seat), "ana" if seat == 0 else f"c-{seat}"),
                       command_id=f"join-{seat}")
    state, _ = handler.state_of("clock")
    service_steps(handler, "clock", state)
    views = wiring.projection_store("views")
    partition = wiring.space.partition_of("clock")
    shown: dict[int, int] = {}  # version -> the deadline seat 0's view showed

    def timed_out() -> bool:
        stored = views.client.get(views.keys.doc(partition, view_name("clock", "0")))
        if stored is not None:
            view = decode(stored)
            if view["hand"] is not None and view["hand"]["to_act"] == 0:
                shown[view["version"]] = view["deadline_ms"]
        return any(isinstance(decode_event(e.data), TurnTimedOut) for e in wiring.store.read("clock"))

    wait_for(timed_out, timed_workers, timeout_s=90)
    stored = wiring.store.read("clock")
    first = next(i for i, e in enumerate(stored) if isinstance(decode_event(e.data), TurnTimedOut))
    began, ended = stored[first - 1], stored[first]
    assert began.at_ms is not None and ended.at_ms is not None
    deadline = began.at_ms + 2000
    assert shown.get(began.version) == deadline, shown  # what seat 0 saw while it was to act
    assert deadline <= ended.at_ms < deadline + 10_000  # played at its end (on a loaded machine, soon after)


@pytest.mark.single_node("restarts the one redis-server process; a cluster's failover is tests/integration/test_cluster_durability.py")
def test_the_bot_and_timer_workers_ride_out_a_redis_restart_and_play_on_afterwards(
    wiring: Wiring, redis_server: PrivateRedis, timed_workers: list[subprocess.Popen[bytes]]
) -> None:
    """Redis killed and started again on its AOF after longer than the client's retries
    last: the bot and timer workers stay up, subscribe again, and a table of bots made
    after the restart plays to its end (its turns reach a bot worker that listens again)."""
    bot_table(wiring, "before", "mighty-5", hands=1)
    wait_for(lambda: wiring.handler.state_of("before")[0].status == "closed", timed_workers, timeout_s=90)
    redis_server.kill()
    time.sleep(3.0)  # the retries (about 1 s of back-off) are spent: the listeners see the error
    assert all(p.poll() is None for p in timed_workers), "a worker exited while Redis was down"
    redis_server.start()
    bot_table(wiring, "after", "mighty-5", hands=1)
    wait_for(lambda: wiring.handler.state_of("after")[0].status == "closed", timed_workers, timeout_s=90)

"""A seat whose player has had no connection to a playing table for the bound
(``MIGHTY_AWAY_AFTER_GONE_S``) is sent away: the rule (domain/table.py, ``SendAway``,
``gone_away``), the timer worker's part that applies it (services/bots/gone.py, over
fakeredis: its scripts read the server's clock) and the gateway's record of who is
connected (services/gateway/presence.py)."""

from __future__ import annotations

import random
import time
from typing import Any

import fakeredis
import pytest
import redis

from domain.codec import decode_event
from domain.errors import MightyError
from domain.table import (
    AWAY_ACTED,
    AWAY_GONE,
    CloseTable,
    CreateTable,
    JoinSeat,
    SeatAway,
    SendAway,
    SetAway,
    StartTable,
    Submission,
    TableState,
    decide,
    evolve,
    gone_away,
)
from services.bootstrap import Wiring, wire
from services.bots.gone import GoneSeats, seen_key, seen_member
from services.bots.timers import TimerWorker
from services.settings import Settings
from tests.unit.gateway_helpers import (
    a_legal_command,
    auth,
    full_table,
    gateway,
    new_player,
    sync_wiring,
)
from tests.unit.test_away_rule import dealt, own_move, step, to_act
from tests.unit.test_idle_tables import BOTS, events_of, playing_table, server_ms

AFTER_S = 30

# ---------------------------------------------------------------- the rule


def test_a_seat_gone_for_the_bound_is_sent_away_with_the_measure_and_the_rule_recorded() -> None:
    state = dealt("mighty-5", 5)
    state, events = step(state, Submission(SendAway(seat=2, gone_s=31, after_s=AFTER_S)))
    assert events == [SeatAway(seat=2, player="p2", away=True, reason=AWAY_GONE, gone_s=31, after_s=AFTER_S)]
    assert state.away == (2,)


def test_the_sent_away_players_own_move_brings_them_back_as_before() -> None:
    state = dealt("mighty-5", 5)
    seat = to_act(state)
    state, _ = step(state, Submission(SendAway(seat=seat, gone_s=AFTER_S, after_s=AFTER_S)))
    state, events = own_move(state)
    assert events[0] == SeatAway(seat=seat, player=f"p{seat}", away=False, reason=AWAY_ACTED)
    assert state.away == ()


@pytest.mark.parametrize(("gone_s", "after_s"), [(29, 30), (0, 1), (500, 0)])
def test_a_seat_not_gone_long_enough_or_under_no_rule_is_refused_not_gone(gone_s: int, after_s: int) -> None:
    state = dealt("mighty-5", 5)
    with pytest.raises(MightyError) as refused:
        decide(state, Submission(SendAway(seat=1, gone_s=gone_s, after_s=after_s)))
    assert refused.value.code == "not_gone"


def test_only_the_service_sends_a_seat_away_for_want_of_a_connection() -> None:
    state = dealt("mighty-5", 5)
    for sender in ("p1", "p2"):
        with pytest.raises(MightyError) as refused:
            decide(state, Submission(SendAway(seat=1, gone_s=99, after_s=AFTER_S), sender))
        assert refused.value.code == "not_allowed"


def test_a_seat_away_already_is_refused_and_a_bots_seat_is_never_sent_away() -> None:
    state = dealt("mighty-5", 5)
    state, _ = step(state, Submission(SetAway(seat=1), "p1"))
    with pytest.raises(MightyError) as refused:
        decide(state, Submission(SendAway(seat=1, gone_s=99, after_s=AFTER_S)))
    assert refused.value.code == "already_away"
    with_bots = TableState(table_id="t2")
    for submission in [Submission(CreateTable(bots={"1": "beginner"}), "p0"),
                       *(Submission(JoinSeat(seat=s), f"p{s}") for s in range(5)),
                       Submission(StartTable(first_dealer=0), "p0")]:
        for event in decide(with_bots, submission):
            with_bots = evolve(with_bots, event)
    assert not gone_away(with_bots, 1, 99, AFTER_S) and gone_away(with_bots, 2, 99, AFTER_S)
    with pytest.raises(MightyError) as refused:
        decide(with_bots, Submission(SendAway(seat=1, gone_s=99, after_s=AFTER_S)))
    assert refused.value.code == "not_allowed"


def test_a_table_not_playing_sends_nobody_away() -> None:
    state = TableState(table_id="t3")
    for submission in [Submission(CreateTable(), "p0"), Submission(JoinSeat(seat=0), "p0")]:
        for event in decide(state, submission):
            state = evolve(state, event)
    assert not gone_away(state, 0, 99, AFTER_S)
    with pytest.raises(MightyError) as refused:
        decide(state, Submission(SendAway(seat=0, gone_s=99, after_s=AFTER_S)))
    assert refused.value.code == "wrong_phase"


def test_gone_away_holds_for_a_persons_seat_gone_at_least_the_bound_and_nothing_else() -> None:
    state = dealt("mighty-5", 5)
    assert gone_away(state, 0, AFTER_S, AFTER_S) and gone_away(state, 0, 10_000, AFTER_S)
    assert not gone_away(state, 0, AFTER_S - 1, AFTER_S)
    assert not gone_away(state, 0, 10_000, 0)  # 0: never
    assert not gone_away(state, 5, 10_000, AFTER_S)  # no such seat


# ---------------------------------------------------------------- the timer worker's part


@pytest.fixture
def wiring() -> Wiring:
    return wire(fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2), Settings(partitions=4))


def seen_ago(wiring: Wiring, player: str, seconds: float, table: str = "t1") -> int:
    """The player was last connected to the table ``seconds`` ago; that time (ms)."""
    at = server_ms(wiring.client) - round(seconds * 1000)
    wiring.client.zadd(seen_key(wiring.space), {seen_member(table, player): at})
    return at


def records(wiring: Wiring) -> dict[str, float]:
    return {m.decode(): s for m, s in wiring.client.zrange(seen_key(wiring.space), 0, -1, withscores=True)}


def test_a_player_gone_longer_than_the_bound_is_sent_away_once_and_their_record_dropped(wiring: Wiring) -> None:
    playing_table(wiring)
    seen_ago(wiring, "ana", AFTER_S + 2)
    gone = GoneSeats(wiring.client, wiring.space, wiring.handler, after_s=AFTER_S, settle_s=0)
    assert gone.run_once() == 1
    last = events_of(wiring)[-1]
    assert isinstance(last, SeatAway) and last.seat == 0 and last.player == "ana" and last.reason == AWAY_GONE
    assert isinstance(last.gone_s, int) and AFTER_S + 2 <= last.gone_s <= AFTER_S + 3 and last.after_s == AFTER_S
    assert wiring.handler.state_of("t1")[0].away == (0,)
    assert records(wiring) == {} and gone.run_once() == 0 and gone.sent == 1
    assert wiring.store.read("t1")[-1].command_id.startswith("gone-")


def test_a_player_seen_within_the_bound_keeps_their_seat_and_their_record(wiring: Wiring) -> None:
    playing_table(wiring)
    seen_ago(wiring, "ana", AFTER_S - 5)
    count = len(events_of(wiring))
    assert GoneSeats(wiring.client, wiring.space, wiring.handler, after_s=AFTER_S, settle_s=0).run_once() == 0
    assert len(events_of(wiring)) == count and seen_member("t1", "ana") in records(wiring)


def test_a_spectators_a_bots_and_a_closed_tables_records_are_dropped_with_no_command(wiring: Wiring) -> None:
    playing_table(wiring)
    playing_table(wiring, "t2")
    wiring.handler.handle("t2", Submission(CloseTable(reason="over")), command_id="end")
    seen_ago(wiring, "watcher", AFTER_S + 1)
    seen_ago(wiring, "b1", AFTER_S + 1)
    seen_ago(wiring, "ana", AFTER_S + 1, table="t2")
    counts = (len(events_of(wiring)), len(events_of(wiring, "t2")))
    assert GoneSeats(wiring.client, wiring.space, wiring.handler, after_s=AFTER_S, settle_s=0).run_once() == 0
    assert (len(events_of(wiring)), len(events_of(wiring, "t2"))) == counts
    assert records(wiring) == {}


def test_a_player_who_came_back_while_the_table_was_read_keeps_their_seat(wiring: Wiring) -> None:
    playing_table(wiring)
    seen_ago(wiring, "ana", AFTER_S + 1)
    gone = GoneSeats(wiring.client, wiring.space, wiring.handler, after_s=AFTER_S, settle_s=0)
    read = wiring.handler.state_of

    def read_while_ana_comes_back(table_id: str) -> Any:
        found = read(table_id)
        seen_ago(wiring, "ana", 0)  # her stream opened meanwhile
        return found

    gone.handler = type("Handler", (), {"state_of": staticmethod(read_while_ana_comes_back),
                                        "handle": wiring.handler.handle})()
    assert gone.run_once() == 0
    assert wiring.handler.state_of("t1")[0].away == () and seen_member("t1", "ana") in records(wiring)


def test_with_the_bound_at_zero_nobody_is_sent_away(wiring: Wiring) -> None:
    playing_table(wiring)
    seen_ago(wiring, "ana", 3600)
    assert GoneSeats(wiring.client, wiring.space, wiring.handler, after_s=0, settle_s=0).run_once() == 0
    assert wiring.handler.state_of("t1")[0].away == () and len(records(wiring)) == 1


def test_a_worker_sends_nobody_away_for_a_bound_after_it_starts_or_loses_redis(wiring: Wiring) -> None:
    playing_table(wiring)
    seen_ago(wiring, "ana", AFTER_S + 1)
    gone = GoneSeats(wiring.client, wiring.space, wiring.handler, after_s=AFTER_S, settle_s=0.3)
    assert gone.run_once() == 0  # just started: a stamp this old may date from an outage it missed
    time.sleep(0.35)
    gone._unsure()  # noqa: SLF001 - what a Redis error in a pass does
    assert gone.run_once() == 0
    time.sleep(0.35)
    assert gone.run_once() == 1 and wiring.handler.state_of("t1")[0].away == (0,)


def test_a_pass_that_cannot_reach_redis_puts_the_next_sends_off(wiring: Wiring) -> None:
    playing_table(wiring)
    seen_ago(wiring, "ana", AFTER_S + 1)
    gone = GoneSeats(wiring.client, wiring.space, wiring.handler, after_s=AFTER_S, settle_s=0.3)
    time.sleep(0.35)  # settled
    due = gone._due  # noqa: SLF001
    gone._due = _failing  # noqa: SLF001 - Redis down for this pass
    with pytest.raises(redis.ConnectionError):
        gone.run_once()
    gone._due = due  # noqa: SLF001 - back
    assert gone.run_once() == 0  # the stamps may date from the outage: a bound's wait first
    time.sleep(0.35)
    assert gone.run_once() == 1


def _failing(**_: Any) -> Any:
    raise redis.ConnectionError("down")


def test_the_timer_worker_sends_gone_seats_away_in_its_once_a_second_pass(wiring: Wiring) -> None:
    playing_table(wiring)
    seen_ago(wiring, "ana", AFTER_S + 1)
    worker = TimerWorker(wiring.client, wiring.space, wiring.handler, idle_s=600, away_after_gone_s=AFTER_S)
    assert worker.gone_seats.after_s == AFTER_S
    worker.idle()
    assert wiring.handler.state_of("t1")[0].away == ()  # a bound's wait first (it has just started)
    worker.gone_seats.settle_s = 0
    worker.gone_seats._unsure()  # noqa: SLF001 - as if the bound had passed
    worker._next_idle = 0.0  # noqa: SLF001 - the next pass is due now, not in a second
    worker.idle()
    assert wiring.handler.state_of("t1")[0].away == (0,) and worker.gone_seats.sent == 1


# ---------------------------------------------------------------- the gateway's record


def _pong(ws: Any) -> None:
    ws.send_json({"type": "ping"})
    while ws.receive_json() != {"type": "pong"}:  # a view may come first
        pass


def test_a_persons_stream_stamps_them_connected_while_open_and_once_more_as_it_closes() -> None:
    # the bound at 1 s: an open stream says so every third of a second
    with gateway(away_after_gone_s=1, idle_s=600.0) as client:
        ana = new_player(client)
        table = client.post("/api/v1/tables", json={"seat": 0, "bots": BOTS}, headers=auth(ana)).json()["table"]
        wiring = sync_wiring(client)
        member = seen_member(table, ana["player"])
        with client.websocket_connect(f"/api/v1/tables/{table}/stream") as ws:  # no token: nobody
            _pong(ws)
        assert records(wiring) == {}
        token = ana["Authorization"].removeprefix("Bearer ")
        with client.websocket_connect(f"/api/v1/tables/{table}/stream?token={token}") as ws:
            deadline = time.monotonic() + 5
            while member not in records(wiring) and time.monotonic() < deadline:
                _pong(ws)
            first = records(wiring)[member]
            while records(wiring)[member] == first and time.monotonic() < deadline:
                _pong(ws)  # and again while it stays open
            assert records(wiring)[member] > first
            still_open = records(wiring)[member]
        deadline = time.monotonic() + 5
        while records(wiring)[member] == still_open and time.monotonic() < deadline:
            time.sleep(0.01)
        assert records(wiring)[member] > still_open  # the stream's last moment


def _move(client: Any, table: str, seated: list[dict[str, str]], rng: random.Random) -> dict[str, str]:
    """The seat to act makes a legal move over HTTP; who moved."""
    seat = client.get(f"/api/v1/tables/{table}/view").json()["to_act"]
    mine = client.get(f"/api/v1/tables/{table}/view", headers=auth(seated[seat])).json()
    sent = client.post(f"/api/v1/tables/{table}/commands", headers=auth(seated[seat]),
                       json={"id": f"m{mine['version']}", "command": a_legal_command(mine, rng)})
    assert sent.status_code == 200, sent.text
    return seated[seat]


def test_a_move_over_http_refreshes_a_record_a_stream_made_and_makes_none_itself() -> None:
    with gateway(away_after_gone_s=AFTER_S, rate_commands=1000) as client:
        table, seated = full_table(client)
        wiring = sync_wiring(client)
        rng = random.Random(3)
        first = _move(client, table, seated, rng)
        assert records(wiring) == {}  # a player over HTTP only: no record, left to the timeouts
        member = seen_member(table, first["player"])
        old = seen_ago(wiring, first["player"], 20, table=table)  # as if a stream of theirs had closed
        while _move(client, table, seated, rng) is not first:
            assert set(records(wiring)) == {member} and records(wiring)[member] == old
        assert records(wiring)[member] > old + 15_000  # their own move: they are there
        assert set(records(wiring)) == {member}


def test_with_the_bound_at_zero_no_stream_stamps_anything() -> None:
    with gateway(away_after_gone_s=0) as client:
        ana = new_player(client)
        table = client.post("/api/v1/tables", json={"seat": 0}, headers=auth(ana)).json()["table"]
        token = ana["Authorization"].removeprefix("Bearer ")
        with client.websocket_connect(f"/api/v1/tables/{table}/stream?token={token}") as ws:
            for _ in range(5):
                _pong(ws)
        assert records(sync_wiring(client)) == {}


def test_the_service_sending_a_seat_away_reads_back_as_its_command_for_verify() -> None:
    from services.audit.recorded import command_of

    event = SeatAway(seat=3, player="p3", away=True, reason=AWAY_GONE, gone_s=41, after_s=AFTER_S)
    assert command_of([event]) == (SendAway(seat=3, gone_s=41, after_s=AFTER_S), None)
    assert decode_event(b'{"type":"seat_away","v":1,"seat":3,"player":"p3","away":true}') == SeatAway(
        seat=3, player="p3")  # stored before the fields: as before


class _CountedCalls:
    """The gateway's coalesced pipeline, keeping the stamps sent through it."""

    def __init__(self) -> None:
        self.stamps: list[tuple[str, str]] = []

    async def call(self, *commands: tuple[Any, ...], shared: bool = False) -> list[Any]:
        self.stamps.extend((str(command[4]), str(command[5])) for command in commands)
        return [1 for _ in commands]


def _presence(calls: _CountedCalls, monkeypatch: pytest.MonkeyPatch, clock: list[float]) -> Any:
    from services.app.lifecycle import Lifecycle
    from services.gateway import presence as presence_module
    from services.store.keys import KeySpace

    monkeypatch.setattr(presence_module.time, "monotonic", lambda: clock[0])
    return presence_module.Presence(calls, KeySpace(4, "ns"), Lifecycle.of(Settings(away_after_gone_s=60)))


def test_a_moves_stamp_is_not_sent_within_the_watch_period_of_its_streams_watcher_here(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    clock = [1000.0]
    calls = _CountedCalls()
    here = _presence(calls, monkeypatch, clock)

    async def moves() -> None:
        await here.here("t1", "p1")  # the watcher of their stream: always
        await here.here("t1", "p1", known_only=True)  # a move a moment later: not sent
        await here.here("t1", "p2", known_only=True)  # another player, no stream here: sent
        clock[0] += here.lifecycle.watch_every_s - 1
        await here.here("t1", "p1", known_only=True)  # within the watch period: not sent
        clock[0] += 1.5
        await here.here("t1", "p1", known_only=True)  # past it (the watcher late): sent

    asyncio.run(moves())
    member, other = seen_member("t1", "p1"), seen_member("t1", "p2")
    assert calls.stamps == [(member, ""), (other, "XX"), (member, "XX")]


def test_once_the_stream_has_closed_every_move_stamps_so_the_bound_counts_from_the_last(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A player who plays on over HTTP after their stream closed is sent away only when
    they have neither reconnected nor moved for the bound (docs/bots.md, "Away seats")."""
    import asyncio

    clock = [1000.0]
    calls = _CountedCalls()
    here = _presence(calls, monkeypatch, clock)

    async def moves() -> None:
        await here.here("t1", "p1")  # the watcher
        clock[0] += 1.0
        await here.here("t1", "p1", leaving=True)  # the stream closes: its last stamp
        for _ in range(3):
            clock[0] += 1.0
            await here.here("t1", "p1", known_only=True)  # each move, seconds apart: each sent

    asyncio.run(moves())
    member = seen_member("t1", "p1")
    assert calls.stamps == [(member, ""), (member, "")] + [(member, "XX")] * 3

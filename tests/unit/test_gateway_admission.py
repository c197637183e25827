"""Stream starts let in a few at a time (services/gateway/admission.py), and a start turned
away closed 1013 ``busy`` before any Redis call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from services.gateway.admission import Admission, Busy
from tests.unit.gateway_helpers import full_table, gateway


def test_starts_past_the_places_wait_and_are_let_in_first_come_first_served() -> None:
    async def scenario() -> list[int]:
        admission = Admission(starting=2, waiting=10, wait_s=5.0)
        order: list[int] = []
        first, second = await admission.enter(), await admission.enter()
        assert admission.running == 2

        async def start(n: int) -> None:
            place = await admission.enter()
            order.append(n)
            place.leave()

        waiting = [asyncio.create_task(start(n)) for n in range(5)]
        await asyncio.sleep(0.01)
        assert admission.queued == 5 and order == []
        first.leave()
        second.leave()
        second.leave()  # a second leave gives nothing back twice
        await asyncio.gather(*waiting)
        assert admission.running == 0 and admission.queued == 0
        return order

    assert asyncio.run(scenario()) == [0, 1, 2, 3, 4]


def test_a_start_beyond_the_queue_is_turned_away_at_once() -> None:
    async def scenario() -> None:
        admission = Admission(starting=1, waiting=1, wait_s=5.0)
        held = await admission.enter()
        queued = asyncio.create_task(admission.enter())
        await asyncio.sleep(0.01)
        with pytest.raises(Busy):
            await admission.enter()
        assert admission.turned_away == 1
        held.leave()
        (await queued).leave()
        assert admission.running == 0

    asyncio.run(scenario())


def test_a_start_that_waits_too_long_is_turned_away_and_holds_no_place() -> None:
    async def scenario() -> None:
        admission = Admission(starting=1, waiting=5, wait_s=0.05)
        held = await admission.enter()
        with pytest.raises(Busy):
            await admission.enter()
        assert admission.queued == 0 and admission.turned_away == 1
        held.leave()
        assert admission.running == 0
        (await admission.enter()).leave()  # the place is free again

    asyncio.run(scenario())


def test_a_start_cancelled_while_waiting_leaves_no_place_behind() -> None:
    async def scenario() -> None:
        admission = Admission(starting=1, waiting=5, wait_s=5.0)
        held = await admission.enter()
        waiter = asyncio.create_task(admission.enter())
        await asyncio.sleep(0.01)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert admission.queued == 0
        held.leave()
        assert admission.running == 0 and admission.turned_away == 0

    asyncio.run(scenario())


def test_a_place_given_as_its_wait_is_cancelled_goes_to_the_next_start() -> None:
    async def scenario() -> None:
        admission = Admission(starting=1, waiting=5, wait_s=5.0)
        held = await admission.enter()
        first = asyncio.create_task(admission.enter())
        second = asyncio.create_task(admission.enter())
        await asyncio.sleep(0.01)
        held.leave()  # the place goes to ``first``...
        first.cancel()  # ...which is cancelled before it runs again
        with pytest.raises(asyncio.CancelledError):
            await first
        (await asyncio.wait_for(second, 1.0)).leave()
        assert admission.running == 0 and admission.queued == 0

    asyncio.run(scenario())


def test_a_stream_with_no_place_to_start_is_closed_busy_and_reads_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from litestar.exceptions import WebSocketDisconnect

    with gateway(secret="unit-secret", stream_starts=1, stream_start_queue=0) as client:
        table, seated = full_table(client)
        token = seated[0]["Authorization"].removeprefix("Bearer ")
        backend = client.app.state.backend
        read: list[str] = []

        async def state(table_id: str) -> Any:
            read.append(table_id)
            raise AssertionError("a start turned away reads nothing")

        monkeypatch.setattr(backend, "state", state)
        admission: Admission = client.app.state.admission
        held = client.blocking_portal.call(admission.enter)  # the gateway's one place, taken
        try:
            with pytest.raises(WebSocketDisconnect) as closed, \
                    client.websocket_connect(f"/api/v1/tables/{table}/stream?after=0&token={token}") as ws:
                ws.receive_json()
        finally:
            held.leave()
        assert closed.value.code == 1013 and closed.value.detail == "busy"
        assert read == [] and admission.turned_away == 1
        metrics = client.get("/metrics").text
        assert "mighty_stream_starts_turned_away 1.0" in metrics
        monkeypatch.undo()
        with client.websocket_connect(f"/api/v1/tables/{table}/stream?after=0&token={token}") as ws:
            assert ws.receive_json()["type"] == "view"  # a place again: the stream starts
        assert admission.running == 0

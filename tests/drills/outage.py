"""The common course of the Redis outage drills (restart, stall): the whole service as
``mighty serve`` runs it (the three projection workers, the bot and timer workers, a
gateway), two tables played by their clients, an outage of the drill's making mid-play,
probes of the API during it, then the checks: no part crashed, every refusal the clients
met is the retryable ``unavailable``, the tables finish, nothing acknowledged is lost,
``mighty verify`` and ``mighty projections check`` pass."""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websockets

from projections import KINDS
from services.settings import Durability
from services.store import connect
from services.store.redis_store import RedisEventStore
from tests.drills.players import (
    Seat,
    guests,
    lost_commands,
    open_table,
    play_all,
    seats_of,
    unacknowledged,
)
from tests.drills.service import Service, drill_settings

TABLES = 2
OUTAGE_AFTER = 20  # commands acknowledged before the outage
PLAY_S = 120.0
PROBE_EVERY_S = 0.25


@dataclass
class Outage:
    """What the outage's own code reports (``began``, ``ended``) and the probes' answers."""

    service: Service
    table: str
    token: str  # a guest's with no seat at ``table``: its commands change nothing
    seats: list[Seat] = field(default_factory=list)
    began_at: float = 0.0
    ended_at: float = 0.0
    probing_ended_at: float = 0.0  # the probes asked after this may meet the store back
    probes: Counter[str] = field(default_factory=Counter)  # code (or failure) -> count
    probe_s: list[float] = field(default_factory=list)  # how long each probe waited for its answer
    stopped: Awaitable[None] | None = None  # the probes still waiting for their answers
    answered: list[tuple[float, str]] = field(default_factory=list)  # when each probe was answered, how
    streams: Counter[str] = field(default_factory=Counter)  # what opening the stream met
    lobby: bool = False  # probe the lobby too: create a player, list the tables

    def began(self) -> None:
        """The outage is on: the commands held for it go."""
        self.began_at = time.monotonic()
        for seat in self.seats:
            seat.gate.set()

    def ended(self) -> None:
        self.ended_at = time.monotonic()

    async def probe_for(self, seconds: float) -> None:
        """Ask the gateway for a view and send it a command, again and again, for
        ``seconds`` (the outage lasts that long whatever the probes wait); then wait for
        the answers still awaited."""
        stop = asyncio.Event()
        probing = asyncio.create_task(self._probe(stop))
        await asyncio.sleep(seconds)
        stop.set()
        self.probing_ended_at = time.monotonic()
        self.stopped = asyncio.shield(probing)

    async def probe_during(self, work: Awaitable[None]) -> None:
        """Probe the API as ``probe_for`` does, for as long as ``work`` (the outage itself:
        a failover) takes."""
        stop = asyncio.Event()
        probing = asyncio.create_task(self._probe(stop))
        try:
            await work
        finally:
            stop.set()
            self.probing_ended_at = time.monotonic()
            self.stopped = asyncio.shield(probing)

    async def _probe(self, stop: asyncio.Event) -> None:
        auth = {"Authorization": f"Bearer {self.token}"}
        async with httpx.AsyncClient(base_url=self.service.base(), timeout=60) as http:
            n = 0
            while not stop.is_set():
                n += 1
                calls: list[tuple[str, str, Any]] = [
                    ("GET", f"/api/v1/tables/{self.table}/view", None),
                    ("POST", f"/api/v1/tables/{self.table}/commands", {"id": f"probe{n}", "command": {"type": "pass"}}),
                ]
                if self.lobby:
                    calls += [("POST", "/api/v1/players", {"name": f"probe{n}"}),
                              ("GET", "/api/v1/tables", None)]
                for method, path, body in calls:
                    asked = time.monotonic()
                    try:
                        answer = await http.request(method, path, json=body, headers=auth)
                        code = f"{answer.status_code} {_code(answer)}"
                    except httpx.TransportError as failure:
                        code = type(failure).__name__
                    answered = time.monotonic()
                    self.probe_s.append(answered - asked)
                    self.probes[code] += 1
                    self.answered.append((answered, code))
                await self._probe_stream()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), PROBE_EVERY_S)

    async def _probe_stream(self) -> None:
        """Open the table's stream: what a client reconnecting now meets (recorded, not
        checked: the API does not say; docs/reliability.md tells what was seen)."""
        url = (self.service.base().replace("http://", "ws://")
               + f"/api/v1/tables/{self.table}/stream?after=0&token={self.token}")
        try:
            async with websockets.connect(url, open_timeout=10, close_timeout=1) as ws:
                try:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
                    seen = f"frame {frame.get('type')} {frame.get('code', '')}".strip()
                except websockets.ConnectionClosed as closed:
                    seen = f"closed {closed.rcvd.code if closed.rcvd else None}"
        except (OSError, TimeoutError, websockets.WebSocketException) as failure:
            seen = type(failure).__name__
        self.streams[seen if not self.ended_at else f"{seen} (once Redis was back)"] += 1


def _code(answer: httpx.Response) -> str:
    if answer.is_success:
        return "ok"
    try:
        return str(answer.json()["code"])
    except (ValueError, KeyError, TypeError):
        return "(not the API's error body)"


@dataclass
class Found:
    seats: list[Seat]
    outage: Outage
    lost: int
    commands: int

    def figures(self) -> dict[str, Any]:
        resumed = [t for s in self.seats if (t := s.journal.first_progress_after(self.outage.ended_at)) is not None]
        return {
            "commands_acknowledged": self.commands,
            "commands_lost": self.lost,
            "outage_s": round(self.outage.ended_at - self.outage.began_at, 3),
            "probe_answers": dict(self.outage.probes),
            "stream_opened_during_outage": dict(self.outage.streams),
            "probe_wait_max_s": round(max(self.outage.probe_s), 3),
            "client_refusals": dict(sum((s.journal.refused for s in self.seats), Counter())),
            "resumed_after_outage_s": round(min(resumed), 3) if resumed else None,
            "resumed_all_after_outage_s": round(max(resumed), 3) if resumed else None,
            "resumed_median_s": round(statistics.median(resumed), 3) if resumed else None,
            "reconnects": sum(len(s.journal.connects) - 1 for s in self.seats),
            "acted_again_after_a_refusal": sum(s.journal.acted_again for s in self.seats),
        }


def run_outage_drill(directory: Path, redis_url: str, outage: Callable[[Outage], Awaitable[None]], *,
                     durability: Durability = "everysec", answers_up: frozenset[str] = frozenset(),
                     refused_by_lost_writes: bool = False, probe_lobby: bool = False,
                     before: Callable[[Service], None] | None = None) -> Found:
    """The drill on the Redis at ``redis_url`` (one server, or a cluster's URL).
    ``answers_up``: what a probe may be answered during the outage besides ``503
    unavailable`` (an outage that not every call meets, a cluster's failover: what the
    API answers with the store up). ``refused_by_lost_writes``: a command may be refused
    by the rules on a state the cluster then discards (a primary continued after it was
    failed over: docs/reliability.md, drill 6); its client acts again on the view, and the
    refusals are counted (``Found.figures``), not failed. ``probe_lobby``: the probes
    call the lobby too (``Outage.lobby``). ``before``: run on the service once it is up,
    before the tables are opened."""
    service = Service(directory / "service", drill_settings(redis_url, durability=durability))
    try:
        service.start_every_part()
        service.wait_leases(KINDS)
        if before is not None:
            before(service)
        base = service.base()
        seats: list[Seat] = []
        for _ in range(TABLES):
            players = guests(base, 5)
            seats += seats_of(open_table(base, players), players, lambda: (base,))
        prober = guests(base, 1)[0]
        drill = Outage(service, seats[0].table, prober.token, seats, lobby=probe_lobby)

        async def course() -> None:
            play = asyncio.create_task(play_all(seats, time.monotonic() + PLAY_S))
            while sum(len(s.journal.acked) for s in seats) < OUTAGE_AFTER:
                assert not play.done(), "the tables ended before the outage"
                await asyncio.sleep(0.01)
            for seat in seats:  # hold the next commands: they go once the outage is on
                seat.gate.clear()
            while not any(s.at_gate for s in seats):
                assert not play.done(), "the tables ended before the outage"
                await asyncio.sleep(0.01)
            await outage(drill)
            if drill.stopped is not None:
                await drill.stopped
            await play

        asyncio.run(course())

        assert service.exited() == {}, f"parts exited: {service.exited()}\n{service.logs()}"
        unfinished = [(s.table, s.seat, s.last, s.journal.last_view and s.journal.last_view.get("phase"))
                      for s in seats if not s.journal.finished]
        assert not unfinished, f"unfinished: {unfinished}\n{service.logs()}"
        # a probe answered during the outage is told the store is unavailable; one answered
        # once the outage's own code stopped probing (it then brings the store back) may
        # have been served by the store that came back
        during = Counter(code for at, code in drill.answered if at < drill.probing_ended_at)
        assert set(during) <= {"503 unavailable", *answers_up}, drill.answered
        refused = sum((s.journal.refused for s in seats), Counter())
        if refused_by_lost_writes:
            pass  # counted in the figures: client_refusals, acted_again
        elif answers_up:  # not every call met the outage
            assert set(refused) <= {"unavailable"}, refused
        else:
            assert set(refused) == {"unavailable"}, refused  # the commands held for the outage met it
        for seat in seats:
            assert seat.journal.repeats == 0
        client = connect(redis_url)
        store = RedisEventStore(client, keys=service.space)
        lost = 0
        for table in sorted({s.table for s in seats}):
            at_table = [s for s in seats if s.table == table]
            events = store.read(table)
            assert not unacknowledged(at_table), unacknowledged(at_table)
            lost += len(lost_commands(at_table, events))
            assert all(s.last == events[-1].version for s in at_table)
            verified = service.mighty("verify", table)
            assert verified.returncode == 0, verified.stdout + verified.stderr
        client.close()
        service.wait_gateway(timeout_s=60)
        checked = service.mighty("projections", "check")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        return Found(seats, drill, lost, sum(len(s.journal.acked) for s in seats))
    finally:
        service.stop()

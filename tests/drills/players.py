"""Clients that play a table through the public API (docs/api.md) and keep a journal of
what they were sent and told, for a drill to check afterwards.

Each seat is one client: it holds the table's WebSocket stream (``?after=`` its last seen
version) and, when a pushed view says it is to act, sends a legal command, over the socket
for even seats and over ``POST /commands`` for odd ones. The command for a view is a
function of the table, seat and version, and its id is the version it answers, so a retry
(the same id) is always the same command. A command is sent again, with the same id,
until it is acknowledged: after an ``unavailable`` refusal, a timeout or a dropped
connection (then on the next gateway in the client's list, and with every command not yet
acknowledged sent again first, since the stream has nothing newer to say while the turn
is still the client's).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import websockets

RETRY_S = 0.2  # between two tries of an unacknowledged command
ANSWER_S = 8.0  # a socket command with no answer this long is sent again
PING_S = 2.0  # a socket silent this long is pinged (the web client pings every 20 s)
ACT_S = 0.03  # a client thinks this long before it acts: a table lasts seconds, not one


def choose(view: dict[str, Any], table: str, seat: int) -> dict[str, Any]:
    """A legal command for ``view``, the same whenever the same view is answered."""
    rng = random.Random(f"{table}/{seat}/{view['version']}")
    legal = view["legal"]
    passes = [c for c in legal if c["type"] == "pass"]
    if passes and rng.random() < 0.7:  # mostly pass: the auction ends sooner
        return dict(passes[0])
    command = dict(rng.choice(legal))
    if command["type"] == "discard" and "count" in command:
        return {"type": "discard", "cards": rng.sample(command["from"], command["count"])}
    return command


@dataclass
class Journal:
    """What one client saw: every view version in the order pushed, the acknowledgements,
    the refusals by code, when it (re)connected and when it was cut off."""

    versions: list[int] = field(default_factory=list)
    acked: dict[str, int] = field(default_factory=dict)  # command id -> the version it answered
    refused: Counter[str] = field(default_factory=Counter)
    connects: list[tuple[float, str]] = field(default_factory=list)  # monotonic time, gateway
    drops: list[float] = field(default_factory=list)
    progress: list[float] = field(default_factory=list)  # monotonic times of the views and acks received
    views_at: list[float] = field(default_factory=list)  # monotonic times of the view frames
    repeats: int = 0  # view frames not newer than the last one seen
    # the views marked ``rollback``: (the last version seen before, the view's version)
    rollbacks: list[tuple[int, int]] = field(default_factory=list)
    # acknowledged commands a rollback took (sent again, the same id, if the turn comes back)
    lost_to_rollback: dict[str, int] = field(default_factory=dict)
    acted_again: int = 0  # new commands sent after a refusal by the rules (``Seat._act_again``)
    pings: int = 0
    ack_log: list[tuple[float, str, int]] = field(default_factory=list)  # when, command id, version
    finished: bool = False
    last_view: dict[str, Any] | None = None
    failures: Counter[str] = field(default_factory=Counter)  # transport failures by kind

    def first_progress_after(self, moment: float) -> float | None:
        """Seconds from ``moment`` to the first view or acknowledgement received after it."""
        later = [t for t in self.progress if t > moment]
        return min(later) - moment if later else None

    def first_view_after(self, moment: float) -> float | None:
        """Seconds from ``moment`` to the first view pushed after it."""
        later = [t for t in self.views_at if t > moment]
        return min(later) - moment if later else None


@dataclass
class Seat:
    table: str
    seat: int
    token: str
    player: str
    gateways: Callable[[], Sequence[str]]  # base URLs to try, in order
    journal: Journal = field(default_factory=Journal)
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> command, unacknowledged
    _gateway: int = 0
    _sent: dict[str, float] = field(default_factory=dict)  # id -> when last sent
    _retry_at: dict[str, float] = field(default_factory=dict)  # id -> when to send again
    _pinged: float = 0.0
    _again: bool = False  # a command was refused by the rules: read the view and act again
    # A drill closes the gate to hold the client's next new command (it is sent once the
    # gate opens): so that a command meets the outage the drill is about to make.
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    at_gate: bool = False

    def __post_init__(self) -> None:
        self.gate.set()

    @property
    def over_socket(self) -> bool:
        return self.seat % 2 == 0

    @property
    def last(self) -> int:
        return self.journal.versions[-1] if self.journal.versions else 0

    @property
    def last_acked(self) -> int:
        """The last version a command of this seat's was acknowledged with: sent as ``acked=``
        (docs/api.md), so a power cut between an ack and its view comes back as a rollback."""
        return max(self.journal.acked.values(), default=0)

    def base(self) -> str:
        found = self.gateways()
        return found[self._gateway % len(found)]

    def next_gateway(self) -> None:
        self._gateway += 1

    # ---------------------------------------------------------------- the loop

    async def play(self, until: float) -> None:
        """Play until the table closes or ``until`` (monotonic) passes."""
        async with httpx.AsyncClient(timeout=30) as http:
            while not self.journal.finished and time.monotonic() < until:
                base = self.base()
                url = (base.replace("http://", "ws://") + f"/api/v1/tables/{self.table}/stream"
                       f"?after={self.last}&acked={self.last_acked}&token={self.token}")
                try:
                    async with websockets.connect(url, open_timeout=5, close_timeout=1, max_size=2**20) as ws:
                        self.journal.connects.append((time.monotonic(), base))
                        for command_id in list(self.pending):  # the turn may still be ours
                            await self._send(ws, http, base, command_id)
                        await self._listen(ws, http, base, until)
                except (OSError, TimeoutError, websockets.WebSocketException, httpx.TransportError) as failure:
                    self.journal.failures[type(failure).__name__] += 1
                    self.journal.drops.append(time.monotonic())
                    self.next_gateway()
                    await asyncio.sleep(RETRY_S)
            await self._settle(http, until)

    async def _settle(self, http: httpx.AsyncClient, until: float) -> None:
        """The table closed before the answer to a command came (the close's view can
        overtake a socket's ack): ask again, the same id, over HTTP, for its answer."""
        while self.pending and time.monotonic() < until:
            command_id = next(iter(self.pending))
            try:
                answer = await http.post(f"{self.base()}/api/v1/tables/{self.table}/commands",
                                         json={"id": command_id, "command": self.pending[command_id]},
                                         headers={"Authorization": f"Bearer {self.token}"})
            except httpx.TransportError:
                self.next_gateway()
                await asyncio.sleep(RETRY_S)
                continue
            if answer.status_code == 200:
                self._acked(command_id, answer.json()["version"])
            else:
                self._refused(command_id, _code_of(answer))
                await asyncio.sleep(RETRY_S)

    async def _listen(self, ws: Any, http: httpx.AsyncClient, base: str, until: float) -> None:
        heard = time.monotonic()
        while not self.journal.finished and time.monotonic() < until:
            try:
                raw = await asyncio.wait_for(ws.recv(), timeout=RETRY_S)
            except TimeoutError:
                await self._resend_due(ws, http, base)
                if time.monotonic() - max(heard, self._pinged) > PING_S:
                    # A stream whose pusher died with the store stays open and silent
                    # until the client sends a frame (docs/reliability.md, drill 3): the
                    # ping is what makes the gateway close it, so the client resumes.
                    self._pinged = time.monotonic()
                    self.journal.pings += 1
                    await ws.send('{"type":"ping"}')
                continue
            frame = json.loads(raw)
            heard = time.monotonic()
            if frame["type"] == "view":
                await self._on_view(frame, ws, http, base)
            elif frame["type"] == "ack":
                self._acked(frame["id"], frame["version"])
            elif frame["type"] == "refused":
                self._refused(frame.get("id"), frame["code"])
            await self._resend_due(ws, http, base)

    async def _on_view(self, frame: dict[str, Any], ws: Any, http: httpx.AsyncClient, base: str) -> None:
        version = int(frame["version"])
        if frame.get("rollback") is True:  # the store went back: the table as it is now
            self.journal.rollbacks.append((self.last, version))
            for command_id, at in list(self.journal.acked.items()):
                if at > version:  # acknowledged beyond what the store holds: lost with it
                    self.journal.lost_to_rollback[command_id] = self.journal.acked.pop(command_id)
        elif version <= self.last:
            self.journal.repeats += 1
            return
        self.journal.versions.append(version)
        self.journal.views_at.append(time.monotonic())
        self.journal.progress.append(time.monotonic())
        view = frame["view"]
        self.journal.last_view = view
        if view.get("status") == "closed":
            self.journal.finished = True
            return
        if view.get("to_act") == self.seat and view.get("legal"):
            command_id = f"c{version}"
            if command_id not in self.pending and command_id not in self.journal.acked:
                await asyncio.sleep(ACT_S)
                self.pending[command_id] = choose(view, self.table, self.seat)
                self.at_gate = True
                await self.gate.wait()
                self.at_gate = False
                await self._send(ws, http, base, command_id)

    # ---------------------------------------------------------------- commands

    async def _send(self, ws: Any, http: httpx.AsyncClient, base: str, command_id: str) -> None:
        command = self.pending[command_id]
        self._sent[command_id] = time.monotonic()
        self._retry_at.pop(command_id, None)
        if self.over_socket:
            await ws.send(json.dumps({"type": "command", "id": command_id, "command": command}))
            return
        answer = await http.post(f"{base}/api/v1/tables/{self.table}/commands",
                                 json={"id": command_id, "command": command},
                                 headers={"Authorization": f"Bearer {self.token}"})
        if answer.status_code == 200:
            self._acked(command_id, answer.json()["version"])
            return
        self._refused(command_id, _code_of(answer))

    async def _resend_due(self, ws: Any, http: httpx.AsyncClient, base: str) -> None:
        """Send again what is due (retries, unanswered socket commands), and act again
        after a refusal by the rules."""
        if self._again:
            await self._act_again(ws, http, base)
        now = time.monotonic()
        for command_id in list(self.pending):
            due = self._retry_at.get(command_id)
            if due is None and self.over_socket and now - self._sent.get(command_id, now) > ANSWER_S:
                due = now
            if due is not None and due <= now:
                await self._send(ws, http, base, command_id)

    def _acked(self, command_id: str, version: int) -> None:
        self.journal.progress.append(time.monotonic())
        self.journal.acked[command_id] = version
        self.journal.ack_log.append((time.monotonic(), command_id, version))
        self.pending.pop(command_id, None)
        self._retry_at.pop(command_id, None)

    def _refused(self, command_id: str | None, code: str) -> None:
        self.journal.refused[code] += 1
        if command_id in self.pending:
            if code in ("unavailable", "rate_limited"):  # retryable: the same id again
                self._retry_at[command_id] = time.monotonic() + RETRY_S
            else:
                self.pending.pop(command_id)
                self._again = True  # as a person would: look at the table again, act on what it shows

    async def _act_again(self, ws: Any, http: httpx.AsyncClient, base: str) -> None:
        """After a refusal by the rules: read the view as it is now and, if the turn is
        still this seat's, send a new command (a new id) for it."""
        self._again = False
        try:
            answer = await http.get(f"{base}/api/v1/tables/{self.table}/view",
                                    headers={"Authorization": f"Bearer {self.token}"})
        except httpx.TransportError:
            self._again = True
            return
        if answer.status_code != 200:
            self._again = True
            return
        view = answer.json()
        if view.get("status") == "closed" or view.get("to_act") != self.seat or not view.get("legal"):
            return
        self.journal.acted_again += 1
        command_id = f"c{view['version']}-again{self.journal.acted_again}"
        self.pending[command_id] = choose(view, self.table, self.seat)
        await self._send(ws, http, base, command_id)


def _code_of(answer: httpx.Response) -> str:
    try:
        return str(answer.json()["code"])
    except (ValueError, KeyError, TypeError):
        return f"http-{answer.status_code}"  # not the API's error body: a drill fails on it


# ---------------------------------------------------------------- tables


@dataclass
class Guest:
    player: str
    token: str


def guests(base: str, count: int) -> list[Guest]:
    with httpx.Client(base_url=base, timeout=30) as http:
        made = [http.post("/api/v1/players", json={"name": f"drill{n}"}).json() for n in range(count)]
    return [Guest(m["player"], m["token"]) for m in made]


def open_table(base: str, players: list[Guest], game: str = "mighty-5", hands: int = 1) -> str:
    """A table of ``players`` (seat i: players[i]); it starts once the last one joins."""
    with httpx.Client(base_url=base, timeout=30) as http:
        made = http.post("/api/v1/tables", json={"game": game, "seat": 0, "hands": hands, "turn_seconds": 0},
                         headers={"Authorization": f"Bearer {players[0].token}"})
        assert made.status_code == 201, made.text
        table: str = made.json()["table"]
        for seat, guest in enumerate(players[1:], start=1):
            joined = http.post(f"/api/v1/tables/{table}/join", json={"seat": seat},
                               headers={"Authorization": f"Bearer {guest.token}"})
            assert joined.status_code == 200, joined.text
    return table


def seats_of(table: str, players: list[Guest], gateways: Callable[[], Sequence[str]]) -> list[Seat]:
    return [Seat(table, n, g.token, g.player, gateways) for n, g in enumerate(players)]


async def play_all(seats: list[Seat], until: float) -> None:
    tasks = [asyncio.create_task(s.play(until)) for s in seats]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


# ---------------------------------------------------------------- what the store says


def unacknowledged(seats: list[Seat]) -> list[str]:
    return [f"seat {s.seat}: {command_id}" for s in seats for command_id in s.pending]


def lost_commands(seats: list[Seat], events: Sequence[Any],
                  rolled_back: tuple[float, int] | None = None) -> list[str]:
    """The acknowledged commands the table's stream does not hold at the version they
    were acknowledged with (``events``: its ``StoredEvent``s). The store's command id is
    the player's id with the client's (services/app/commands.py, ``play``).

    ``rolled_back``: (when the store came back, the table's version it came back with)
    after a power cut under ``everysec``. A command whose last acknowledgement came before
    that moment at a version beyond it is the documented loss of the last second, not a
    lost command: the store never held it after the cut (``rolled_back_acks``)."""
    last_version: dict[str, int] = {}
    for event in events:
        last_version[event.command_id] = max(event.version, last_version.get(event.command_id, 0))
    lost = []
    for seat in seats:
        taken = set(rolled_back_acks(seat, *rolled_back)) if rolled_back is not None else set()
        for command_id, version in seat.journal.acked.items():
            if command_id in taken:
                continue
            if last_version.get(f"{seat.player}:{command_id}") != version:
                lost.append(f"seat {seat.seat}: {command_id} acknowledged at {version}")
    return lost


def rolled_back_acks(seat: Seat, back: float, version: int) -> list[str]:
    """The commands of ``seat`` last acknowledged before ``back`` (monotonic) with a
    version beyond ``version``, the one the store came back with: a rollback took them.
    The client cannot always tell (a command it sent before the cut may be decided on the
    rolled-back table and take the same version before the view marked rollback reaches it,
    docs/reliability.md, "Rollback"); the drill can, from the AOF it put back."""
    last_ack: dict[str, tuple[float, int]] = {}
    for moment, command_id, acked_at in seat.journal.ack_log:
        last_ack[command_id] = (moment, acked_at)
    return [command_id for command_id, (moment, acked_at) in last_ack.items()
            if moment < back and acked_at > version and seat.journal.acked.get(command_id) == acked_at]


def told(seats: list[Seat], events: Sequence[Any]) -> str:
    """What a failing drill prints: each seat's journal (views, rollbacks, acks, what a
    rollback took, connections) beside the table's stream (version: command id)."""
    lines = [f"stream: {[(e.version, e.command_id.split(':')[-1]) for e in events]}"]
    for seat in seats:
        journal = seat.journal
        lines.append(
            f"seat {seat.seat}: versions {journal.versions} rollbacks {journal.rollbacks} "
            f"acked {journal.acked} lost_to_rollback {journal.lost_to_rollback} "
            f"refused {dict(journal.refused)} connects {len(journal.connects)} drops {len(journal.drops)} "
            f"again {journal.acted_again} acks {[(round(t, 2), c, v) for t, c, v in journal.ack_log]}")
    return "\n".join(lines)

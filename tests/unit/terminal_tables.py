"""A table of any game on the domain alone, as the terminal client sees it over the API:
each seat's view document as the gateway sends it (``views.view_document``: the labels in
the reader's language, ``hand_order``, the discard step as a count), and a stand-in for
the table's stream that takes the client's commands as the gateway does
(``submission_from_wire``) and pushes the next view. The other seats play a random legal
entry of their own views, as a bot of level ``random`` would.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec

from domain.errors import MightyError
from domain.registry import game_of
from domain.table import (
    CreateTable,
    DealHand,
    JoinSeat,
    StartTable,
    Submission,
    TableState,
    decide,
    evolve,
    initial_state,
)
from projections.views import ViewState, render
from services.commands.tables import submission_from_wire
from services.gateway import labels
from services.gateway.views import view_document

NAMES = ["Me", "Bo", "Cy", "Di", "Ed", "Fa", "Gu", "Hy"]


def catalogue(lang: str = "en") -> list[dict[str, Any]]:
    """``GET /api/v1/games``' ``games``, as the client receives it."""
    return list(msgspec.to_builtins(labels.games(lang))["games"])


class DomainTable:
    """One hand of ``variant``, a player a seat; the client under test sits at ``seat``."""

    def __init__(self, variant: str, seed: int, *, seat: int = 0, lang: str = "en",
                 prefer: tuple[dict[str, Any], ...] = ({"type": "pass"},
                                                        {"type": "bargain", "action": "continue"})) -> None:
        self.rng = random.Random(seed)
        self.prefer = prefer  # what the others do whenever it is legal (so the client declares)
        self.seat = seat
        self.lang = lang
        self.state: TableState = initial_state("t-pilot")
        self.version = 0
        self.apply(Submission(CreateTable(variant=variant, options={}, name="pilot", hands=1, turn_seconds=0,
                                          bots={}, created="2024-01-01T00:00:00Z"), "p0"))
        for s in range(len(self.state.seats)):
            self.apply(Submission(JoinSeat(seat=s), f"p{s}"))
        self.apply(Submission(StartTable(first_dealer=self.rng.randrange(len(self.state.seats))), "p0"))
        assert self.state.rules is not None
        deck = list(game_of(self.state.rules).deck(self.state.rules))
        self.rng.shuffle(deck)
        self.apply(Submission(DealHand(order=tuple(deck), salt="5a" * 16)))

    @property
    def names(self) -> list[str]:
        return NAMES[: len(self.state.seats)]

    def apply(self, submission: Submission) -> None:
        for event in decide(self.state, submission):
            self.state = evolve(self.state, event)
            self.version += 1

    def view(self, seat: int | None = None) -> dict[str, Any]:
        """The view document of ``seat`` (the client's by default)."""
        reader = str(self.seat if seat is None else seat)
        stored = msgspec.json.encode(render(ViewState(table=self.state, version=self.version, name="pilot"), reader))
        return view_document(stored, lang=self.lang)

    @property
    def playing(self) -> bool:
        return self.state.status == "playing" and not self.state.awaiting_deal

    def to_act(self) -> int | None:
        if not self.playing or self.state.hand is None:
            return None
        acting: int | None = self.state.game.to_act(self.state.hand)
        return acting

    def send(self, seat: int, command: dict[str, Any]) -> None:
        """A command as the gateway takes it (its ``label`` ignored); a refusal raises."""
        self.apply(submission_from_wire({**fields(command), "seat": seat}, f"p{seat}", self.state.game.name))

    def others_play(self) -> None:
        """The other seats act until it is the client's turn or the hand is over."""
        while (acting := self.to_act()) is not None and acting != self.seat:
            legal = self.view(acting)["legal"]
            preferred = [e for e in legal if any(fields(e) == p for p in self.prefer)]
            entry = dict(self.rng.choice(preferred or legal))
            if entry["type"] == "discard" and "count" in entry:
                entry["cards"] = self.rng.sample(entry.pop("from"), entry.pop("count"))
            self.send(acting, entry)


def fields(entry: dict[str, Any]) -> dict[str, Any]:
    """A legal entry as a command, without its ``label``."""
    return {k: v for k, v in entry.items() if k != "label"}


class FakeStream:
    """What ``TableScreen`` sends through: the command applied to the domain table (a
    refusal raised as the client's ``ApiError``), then the others' moves, then the new
    view pushed to the screen."""

    def __init__(self, table: DomainTable, screen: Any) -> None:
        self.table = table
        self.screen = screen
        self.sent: list[dict[str, Any]] = []

    async def send(self, command: dict[str, Any]) -> int:
        from clients.terminal.api import ApiError

        self.sent.append(command)
        try:
            self.table.send(self.table.seat, command)
        except MightyError as error:
            raise ApiError(422, error.code, error.message) from error
        self.table.others_play()
        self.screen.show_view(self.table.view())
        return self.table.version

    async def stop(self) -> None:
        return None

"""A table's match (domain/table.py): its length closes it after the last scored hand,
its metadata travels in the creation event, and a seat left after the start is away
until its player comes back. Played with the service's random players
(services/players.py), as the demo plays."""

from __future__ import annotations

import random

import pytest

from domain.codec import decode_event
from domain.errors import RuleError
from domain.games import TableCreatedEvent
from domain.table import (
    CreateTable,
    SetAway,
    Submission,
    TableClosed,
    TableEvent,
    TableState,
    decide,
    evolve,
    initial_state,
)
from projections import replay
from projections.directory import CLOSED_DOC, DIRECTORY_DOC, DirectoryProjection, decode_entry
from projections.docs import DocKey
from services.audit import verify_events
from services.commands.tables import table_handler
from services.players import next_submission, seating
from tests.memory_store import InMemoryEventStore

PLAYERS = ["ana", "bo", "cy", "di", "ed"]


def _apply(state: TableState, events: list[TableEvent], log: list[TableEvent]) -> TableState:
    for event in events:
        state = evolve(state, event)
        log.append(event)
    return state


def _table(hands: int, variant: str = "mighty-5", players: list[str] = PLAYERS) -> tuple[TableState, list[TableEvent]]:
    log: list[TableEvent] = []
    create = CreateTable(variant=variant, name="m", hands=hands, turn_seconds=30, bots={"4": "beginner"},
                         created="2026-12-01T20:00:00Z")
    state = _apply(initial_state("m1"), decide(initial_state("m1"), Submission(create, players[0])), log)
    for submission in seating(players):
        state = _apply(state, decide(state, submission), log)
    return state, log


def _play_out(state: TableState, log: list[TableEvent], rng: random.Random, limit: int = 20_000) -> TableState:
    for _ in range(limit):
        move = next_submission(state, rng)
        if move is None:
            return state
        state = _apply(state, decide(state, move), log)
    raise AssertionError("the match did not end")


@pytest.mark.parametrize("variant,players", [("mighty-5", PLAYERS), ("mitigati", PLAYERS[:3])])
def test_a_match_of_n_hands_closes_itself_when_its_nth_hand_is_scored(variant: str, players: list[str]) -> None:
    store = InMemoryEventStore()
    handler = table_handler(store)
    create = CreateTable(variant=variant, hands=2)
    rng = random.Random(4)
    for n, submission in enumerate([Submission(create, players[0]), *seating(players)]):
        handler.handle("m1", submission, command_id=f"s{n}")
    for n in range(20_000):
        state, _ = handler.state_of("m1")
        move = next_submission(state, rng)
        if move is None:
            break
        handler.handle("m1", move, command_id=f"c{n}")
    state, _ = handler.state_of("m1")
    assert state.status == "closed" and state.hands_scored == 2
    stored = store.read("m1")
    last = decode_event(stored[-1].data)
    assert isinstance(last, TableClosed) and last.reason == "match_over"
    # verify re-derives the closing from the rules, so the stream verifies
    assert verify_events("m1", stored).ok


def test_the_creation_event_carries_the_match_and_the_directory_shows_it_finished() -> None:
    state, log = _table(hands=1)
    created = log[0]
    assert isinstance(created, TableCreatedEvent)
    assert (created.hands, created.turn_seconds, created.bots, created.created) == (
        1, 30, {"4": "beginner"}, "2026-12-01T20:00:00Z")
    _play_out(state, log, random.Random(5))
    docs = replay(DirectoryProjection(), [("m1", v, e) for v, e in enumerate(log, start=1)])
    assert DocKey(DIRECTORY_DOC, "m1") not in docs
    entry = decode_entry(docs[DocKey(CLOSED_DOC, "m1")])
    assert entry.status == "closed" and entry.reason == "match_over" and entry.hands == 1
    assert entry.hands_scored == 1 and entry.bots == {"4": "beginner"} and entry.created_by == "ana"


def test_a_seat_left_after_the_start_is_away_until_its_player_comes_back() -> None:
    state, log = _table(hands=0)
    state = _apply(state, decide(state, Submission(SetAway(seat=2), "cy")), log)
    assert state.away == (2,)
    with pytest.raises(RuleError) as twice:
        decide(state, Submission(SetAway(seat=2), "cy"))
    assert twice.value.code == "already_away"
    with pytest.raises(RuleError) as other:
        decide(state, Submission(SetAway(seat=2), "bo"))
    assert other.value.code == "not_your_seat"
    docs = replay(DirectoryProjection(), [("m1", v, e) for v, e in enumerate(log, start=1)])
    assert decode_entry(docs[DocKey(DIRECTORY_DOC, "m1")]).away == (2,)
    state = _apply(state, decide(state, Submission(SetAway(seat=2, away=False), "cy")), log)
    assert state.away == ()


def test_a_match_refuses_negative_lengths_and_bots_off_the_table() -> None:
    for create in (CreateTable(hands=-1), CreateTable(turn_seconds=-5), CreateTable(bots={"5": "beginner"}),
                   CreateTable(bots={"x": "beginner"}), CreateTable(bots={"1": ""})):
        with pytest.raises(RuleError) as refused:
            decide(initial_state("m2"), Submission(create, "ana"))
        assert refused.value.code == "malformed_command"

"""Projections as pure folds: views per reader (docs/rules/mighty.md §8), ledgers (§6), the lobby.

Tables are played here with the domain alone: random legal commands (services.players)
decided and evolved in memory, so these tests need no Redis. The visibility checker
``assert_reader_may_see`` is shared with the integration tests, which run it on what the
workers stored and published.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.mighty.cards import is_card
from domain.mighty.events import HandScored
from domain.mighty.state import Bidding, Finished, Playing, Redeal
from domain.mighty.views import seat_view, spectator_view
from domain.table import (
    CloseTable,
    CreateTable,
    DealRevealed,
    Resign,
    Submission,
    TableEvent,
    TableState,
    decide,
    evolve,
    initial_state,
)
from projections import new_projection, replay
from projections.directory import DIRECTORY_DOC, DirectoryProjection, decode_entry
from projections.docs import DocKey, LastWord, decode
from projections.ledger import (
    PLAYERS_DOC,
    LedgerProjection,
    combine,
    decode_player,
    decode_table,
    table_name,
)
from projections.views import SPECTATOR, ViewsProjection, render, render_all, view_name
from services.players import next_submission, seating

Entry = tuple[str, int, TableEvent]


# ---------------------------------------------------------------- playing tables in memory


def play_table(table_id: str, players: list[str], hands: int, rng: random.Random, close: bool = True) -> list[Entry]:
    """Every event of a table that plays ``hands`` scored hands, with its version."""
    state, entries = initial_state(table_id), []

    def send(submission: Submission) -> None:
        nonlocal state
        for event in decide(state, submission):
            state = evolve(state, event)
            entries.append((table_id, len(entries) + 1, event))

    send(Submission(command=CreateTable(name=f"table {table_id}"), player=players[0]))
    for submission in seating(players):
        send(submission)
    while state.hands_scored < hands:
        move = next_submission(state, rng)
        assert move is not None
        send(move)
    if close:
        send(Submission(command=CloseTable()))
    return entries


def interleave(tables: list[list[Entry]], rng: random.Random) -> list[Entry]:
    """The tables' events merged as a feed would hold them: each table's in order."""
    queues = [list(t) for t in tables]
    merged: list[Entry] = []
    while any(queues):
        queue = rng.choice([q for q in queues if q])
        merged.append(queue.pop(0))
    return merged


def states_of(entries: list[Entry]) -> Iterator[tuple[Entry, TableState]]:
    """Each entry with its table's state right after it."""
    states: dict[str, TableState] = {}
    for entry in entries:
        table_id, _, event = entry
        states[table_id] = evolve(states.get(table_id) or initial_state(table_id), event)
        yield entry, states[table_id]


# ---------------------------------------------------------------- what a reader may see (§8)


def cards_in(value: Any, key: str = "") -> set[str]:
    """Every card named in a view document, except where naming a card reveals nothing:
    the friend call (public) and the friend calls a declarer may choose from."""
    if key in ("friend_call",):
        return set()
    if isinstance(value, dict):
        if value.get("type") == "call_friend":
            return set()
        return {c for k, v in value.items() for c in cards_in(v, k)}
    if isinstance(value, list):
        return {c for v in value for c in cards_in(v, key)}
    return {value} if is_card(value) else set()


def public_cards(state: TableState) -> set[str]:
    """Cards on the table: every card played, and the kitty if it was turned face up."""
    hand = state.hand
    if hand is None or isinstance(hand, Bidding | Redeal):
        return set()
    shown = set(hand.kitty) if hand.kitty_shown else set()
    if isinstance(hand, Playing | Finished):
        shown |= {c for trick in hand.tricks for c in trick.cards}
    if isinstance(hand, Playing):
        shown |= set(hand.trick)
    return shown


def allowed_cards(state: TableState, reader: str) -> set[str]:
    allowed = public_cards(state)
    hand = state.hand
    if hand is None or reader == SPECTATOR:
        return allowed
    seat = int(reader)
    allowed |= set(hand.hands[seat])
    if not isinstance(hand, Bidding | Redeal) and hand.declarer == seat:
        allowed |= set(hand.kitty) | set(hand.discards or ())
    return allowed


def assert_reader_may_see(doc: bytes, state: TableState, deal_salts: set[str]) -> None:
    """A stored or published view holds nothing its reader may not see (§8)."""
    view = decode(doc)
    reader = view["reader"]
    assert view["deal"] is None, "only the audit view holds the deal"
    hidden = cards_in(view) - allowed_cards(state, reader)
    assert not hidden, f"{reader} sees {sorted(hidden)} at version {view['version']}"
    for salt in deal_salts:
        assert salt.encode() not in doc, f"{reader} sees a deal's salt before it is revealed"
    hand, own = view["hand"], state.hand
    if hand is not None and own is not None and not isinstance(own, Bidding | Redeal):
        friend_known = getattr(own, "friend_known", False) or isinstance(own, Finished)
        may_know = friend_known or (reader != SPECTATOR and getattr(own, "friend", None) == int(reader))
        assert may_know or hand.get("friend") is None, f"{reader} knows the friend too early"
    if reader == SPECTATOR:
        assert hand is None or (hand["hand"] is None and hand["discards"] is None)


def secret_salts(state: TableState) -> set[str]:
    return {state.salt} if state.salt else set()


# ---------------------------------------------------------------- views


def as_json(value: object) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


def test_each_readers_view_is_the_domains_view_of_that_reader() -> None:
    entries = play_table("t1", ["ana", "bo", "cy", "di", "ed"], 1, random.Random(1), close=False)
    projection = ViewsProjection()
    for (table_id, version, event), state in states_of(entries):
        projection.apply(table_id, version, event)
        docs = projection.flush()
        if state.hand is None:
            continue
        for seat in range(5):
            view = decode(docs[DocKey(view_name(table_id, str(seat)))])
            assert view["hand"] == as_json(seat_view(state.hand, seat))
            assert view["version"] == version
        spectator = decode(docs[DocKey(view_name(table_id, SPECTATOR))])
        assert spectator["hand"] == as_json(spectator_view(state.hand))


def test_the_views_worker_writes_no_document_per_hand_only_each_readers_view_and_the_turns() -> None:
    """A hand's audit view and its deal's proof are read from the stream (the replay
    route): a document per hand would only cost memory (docs/capacity.md)."""
    entries = play_table("t1", ["ana", "bo", "cy", "di", "ed"], 2, random.Random(2))
    assert sum(isinstance(e, DealRevealed) for _, _, e in entries) >= 2
    docs = replay(ViewsProjection(), entries)
    # the table closed: its seat views were a last word, announced and not kept
    assert {key.name for key in docs if key.name.startswith("view:")} == {view_name("t1", SPECTATOR)}
    assert not any(":audit:" in key.name for key in docs)
    open_table = replay(ViewsProjection(), play_table("t2", ["ana", "bo", "cy", "di", "ed"], 2, random.Random(2),
                                                      close=False))
    readers = {view_name("t2", reader) for reader in [*map(str, range(5)), SPECTATOR]}
    assert {key.name for key in open_table if key.name.startswith("view:")} == readers


def test_a_view_is_written_again_only_when_it_changed() -> None:
    projection = ViewsProjection()
    entries = play_table("t1", ["ana", "bo", "cy", "di", "ed"], 1, random.Random(3), close=False)
    for table_id, version, event in entries:
        projection.apply(table_id, version, event)
    assert projection.flush()
    assert projection.flush() == {}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_no_view_holds_a_card_its_reader_may_not_see(seed: int) -> None:
    rng = random.Random(seed)
    entries = play_table("t1", ["ana", "bo", "cy", "di", "ed"], 2, rng)
    projection = ViewsProjection()
    for (table_id, version, event), state in states_of(entries):
        projection.apply(table_id, version, event)
        for key, doc in projection.flush().items():
            if doc is not None and key.name.startswith("view:") and ":audit:" not in key.name:
                assert_reader_may_see(doc, state, secret_salts(state))


def test_a_spectator_sees_no_unplayed_card_but_the_turned_up_kitty() -> None:
    entries = play_table("t1", ["ana", "bo", "cy", "di", "ed"], 1, random.Random(4), close=False)
    projection = ViewsProjection()
    for (table_id, version, event), state in states_of(entries):
        projection.apply(table_id, version, event)
        doc = projection.flush().get(DocKey(view_name(table_id, SPECTATOR)))
        assert doc is not None
        assert cards_in(decode(doc)) <= public_cards(state)


# ---------------------------------------------------------------- the same documents however batched


def some_tables(seed: int, count: int = 4, hands: int = 2) -> list[Entry]:
    rng = random.Random(seed)
    pool = [f"p{i:02d}" for i in range(1, 9)]
    tables = [play_table(f"t{i}", rng.sample(pool, 5), hands, rng, close=i % 2 == 0) for i in range(count)]
    return interleave(tables, rng)


def test_a_replay_gives_the_same_bytes_however_the_feed_is_batched() -> None:
    entries = some_tables(5)
    for kind in ("views", "ledger", "directory"):
        whole = replay(new_projection(kind), entries)
        assert whole
        for batch in (1, 7, 100):
            assert replay(new_projection(kind), entries, batch=batch) == whole, (kind, batch)


def test_a_projection_restored_from_its_documents_goes_on_as_if_never_stopped() -> None:
    entries = some_tables(6)
    half = len(entries) // 2
    for kind in ("ledger", "directory"):
        first = new_projection(kind)
        stored = replay(first, entries[:half])
        second = new_projection(kind)
        for table_id in {t for t, _, _ in entries[half:]}:
            if isinstance(second, LedgerProjection):
                second.restore(table_id, stored.get(DocKey(table_name(table_id))))
            elif isinstance(second, DirectoryProjection):
                second.restore(table_id, stored.get(DocKey(DIRECTORY_DOC, table_id)))
        if isinstance(second, LedgerProjection):
            second.restore_players({k.field: v for k, v in stored.items() if k.name == PLAYERS_DOC and k.field})
        resumed = dict(stored)
        resumed.update(replay(second, entries[half:]))
        for key in [k for k in resumed if k.name == DIRECTORY_DOC and k not in replay(new_projection(kind), entries)]:
            del resumed[key]  # a table closed in the second half: the worker deletes it
        assert resumed == replay(new_projection(kind), entries), kind


# ---------------------------------------------------------------- ledgers


def test_ledger_totals_are_the_sum_of_the_hands_and_each_hand_sums_to_zero() -> None:
    entries = some_tables(7, count=5, hands=3)
    docs = replay(LedgerProjection(), entries)
    scored = [e for _, _, e in entries if isinstance(e, HandScored)]
    for table_id in {t for t, _, _ in entries}:
        ledger = decode_table(docs[DocKey(table_name(table_id))])
        assert len(ledger.hands) == 3
        for line in ledger.hands:
            assert sum(line.scores) == 0
        assert ledger.totals == tuple(map(sum, zip(*(line.scores for line in ledger.hands), strict=True)))
        assert ledger.hands[-1].totals == ledger.totals
    players = [decode_player(d) for k, d in docs.items() if k.name == PLAYERS_DOC]
    assert sum(p.total for p in players) == 0
    assert sum(p.hands for p in players) == 5 * len(scored)
    assert sum(p.declared for p in players) == len(scored)
    assert sum(p.made for p in players) == sum(e.made for e in scored)


def test_a_players_ledger_is_the_sum_of_their_contributions_in_every_partition() -> None:
    entries = some_tables(8, count=6, hands=1)
    partitions = [[e for e in entries if int(e[0][1:]) % 2 == p] for p in (0, 1)]
    parts = [replay(LedgerProjection(), part) for part in partitions]
    whole = replay(LedgerProjection(), entries)
    for key, data in whole.items():
        if key.name != PLAYERS_DOC:
            continue
        pieces = [decode_player(p[key]) for p in parts if key in p]
        assert combine(key.field or "", pieces) == decode_player(data)


# ---------------------------------------------------------------- the lobby directory


def test_the_directory_shows_open_and_playing_tables_and_forgets_closed_ones() -> None:
    rng = random.Random(9)
    kept = play_table("open1", ["ana", "bo", "cy", "di", "ed"], 1, rng, close=False)
    closed = play_table("gone1", ["ana", "bo", "cy", "di", "ed"], 1, rng, close=True)
    docs = replay(DirectoryProjection(), kept + closed)
    assert DocKey(DIRECTORY_DOC, "gone1") not in docs
    entry = decode_entry(docs[DocKey(DIRECTORY_DOC, "open1")])
    assert entry.status == "playing" and entry.open_seats == 0 and entry.hands_played >= 1
    assert entry.seats == ("ana", "bo", "cy", "di", "ed") and entry.rules is not None

    projection = DirectoryProjection()
    for table_id, version, event in kept[:3]:  # created, two seats taken
        projection.apply(table_id, version, event)
    early = decode_entry(projection.flush()[DocKey(DIRECTORY_DOC, "open1")] or b"")
    assert early.status == "open" and early.open_seats == 3 and early.name == "table open1"


def test_a_view_document_is_deterministic() -> None:
    entries = play_table("t1", ["ana", "bo", "cy", "di", "ed"], 1, random.Random(10), close=False)
    projection = ViewsProjection()
    for table_id, version, event in entries:
        projection.apply(table_id, version, event)
    state = projection.tables["t1"]
    assert msgspec.json.encode(render(state, "2")) == msgspec.json.encode(render(state, "2"))
    for reader, view in render_all(state).items():  # the workers' path: all readers at once
        assert msgspec.json.encode(view) == msgspec.json.encode(render(state, reader))


def test_a_table_closed_mid_hand_leaves_no_view_saying_whose_turn_it_is_or_what_is_legal() -> None:
    """After a resignation every command is refused (table_closed): a bot or client reading
    its view must not be told it is to act, nor offered commands."""
    entries = play_table("t1", ["ana", "bo", "cy", "di", "ed"], 1, random.Random(3), close=False)
    state = evolve(initial_state("t1"), entries[0][2])
    for _, _, event in entries[1:]:
        state = evolve(state, event)
    rng = random.Random(1)
    for _ in range(8):  # into the next hand
        submission = next_submission(state, rng)
        assert submission is not None
        for event in decide(state, submission):
            state = evolve(state, event)
            entries.append(("t1", len(entries) + 1, event))
    for event in decide(state, Submission(command=Resign(seat=0), player="ana")):
        entries.append(("t1", len(entries) + 1, event))
    projection = ViewsProjection()
    for table_id, version, event in entries:
        projection.apply(table_id, version, event)
    docs = projection.flush()  # what the worker stores, and announces
    assert set(replay(ViewsProjection(), entries)) == {DocKey(view_name("t1", SPECTATOR))}, "seat views not kept"
    for reader in [*map(str, range(5)), SPECTATOR]:
        data = docs[DocKey(view_name("t1", reader))]
        assert data is not None
        view = decode(data)
        assert view["status"] == "closed"
        if reader != SPECTATOR:  # a last word: the table without the hand, announced, not kept
            assert isinstance(data, LastWord) and view["hand"] is None, reader
            continue
        assert view["hand"]["to_act"] is None and view["hand"]["legal"] == [], reader
        assert view["hand"]["discard_count"] is None


@pytest.mark.parametrize("variant", ["mighty-5", "mighty-8"])
def test_each_ledger_line_names_every_friend_of_its_hand(variant: str) -> None:
    """With two packs there may be two friends and ``HandScored.friend`` is null: the
    line's ``friends`` comes from the public reveals, and equals the hand's own partnership."""
    n = 8 if variant == "mighty-8" else 5
    players = [f"q{i}" for i in range(n)]
    rng = random.Random(8)
    state, entries, partnerships = initial_state("f1"), [], []

    def send(submission: Submission) -> None:
        nonlocal state
        for event in decide(state, submission):
            state = evolve(state, event)
            entries.append(("f1", len(entries) + 1, event))
            if isinstance(event, HandScored):
                assert isinstance(state.hand, Finished)
                partnerships.append(state.hand.friends or (() if state.hand.friend is None else (state.hand.friend,)))

    send(Submission(command=CreateTable(variant=variant), player=players[0]))
    for submission in seating(players):
        send(submission)
    while state.hands_scored < 12:
        move = next_submission(state, rng)
        assert move is not None
        send(move)
    ledger = decode_table(replay(LedgerProjection(), entries)[DocKey(table_name("f1"))])  # type: ignore[arg-type]
    assert [line.friends for line in ledger.hands] == [tuple(sorted(p)) for p in partnerships]
    if variant == "mighty-8":
        assert any(len(line.friends) == 2 for line in ledger.hands), "a hand with two friends was played"

"""Projections of Mitigati tables, in the style of test_projections.py: views hold only
what their reader may see, the audit view proves the deal, the ledger adds up (an
abandoned deal scored by its bargain), the directory shows the variant, and every
projection gives the same bytes however the feed of mixed Mighty and Mitigati tables is
batched or resumed."""

from __future__ import annotations

import random
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.mitigati import events as mev
from domain.mitigati.cards import is_card
from domain.mitigati.commands import Bargain
from domain.mitigati.ledger import TableLedger as MitigatiTableLedger
from domain.mitigati.state import Declaring, Finished, Playing
from domain.table import (
    CloseTable,
    CreateTable,
    DealRevealed,
    Submission,
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
    decode_player,
    decode_table,
    table_name,
)
from projections.views import SPECTATOR, ViewsProjection, view_name
from services.players import next_submission, seating
from tests.unit.test_projections import Entry, interleave, play_table, states_of


def play_mitigati(table_id: str, players: list[str], hands: int, rng: random.Random,
                  close: bool = True, abandon_first: bool = False) -> list[Entry]:
    """Every event of a Mitigati table that plays ``hands`` hands (random players; the
    first deal abandoned by a bargain of 3 when ``abandon_first``)."""
    state, entries = initial_state(table_id), []

    def send(submission: Submission) -> None:
        nonlocal state
        for event in decide(state, submission):
            state = evolve(state, event)
            entries.append((table_id, len(entries) + 1, event))

    send(Submission(command=CreateTable(variant="mitigati", name=f"tarot {table_id}"), player=players[0]))
    for submission in seating(players):
        send(submission)
    if abandon_first:
        move = next_submission(state, rng)
        assert move is not None
        send(move)  # the deal
        dealer = state.dealer
        for seat, action, amount in (((dealer + 2) % 3, "pay", 3), ((dealer + 1) % 3, "sell", 3),
                                     (dealer, "pass", None)):
            send(Submission(Bargain(seat=seat, action=action, amount=amount), state.seats[seat]))  # type: ignore[arg-type]
    while state.hands_scored < hands:
        move = next_submission(state, rng)
        assert move is not None
        send(move)
    if close:
        send(Submission(command=CloseTable()))
    return entries


def cards_in(value: Any) -> set[str]:
    if isinstance(value, dict):
        return {c for v in value.values() for c in cards_in(v)}
    if isinstance(value, list):
        return {c for v in value for c in cards_in(v)}
    return {value} if is_card(value) else set()


def public_cards(state: TableState) -> set[str]:
    """Cards played, and tarocchi's trumps shown when declared."""
    hand = state.hand
    shown: set[str] = set()
    if isinstance(hand, Declaring | Playing | Finished):
        shown |= {c for d in hand.declarations for c in (d.shown or ())}
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
    if seat == hand.dealer and isinstance(hand, Declaring | Playing | Finished):
        allowed |= set(hand.discards)
    return allowed


def assert_reader_may_see(doc: bytes, state: TableState) -> None:
    view = decode(doc)
    reader = view["reader"]
    assert view["deal"] is None, "only the audit view holds the deal"
    hidden = cards_in(view) - allowed_cards(state, reader)
    assert not hidden, f"{reader} sees {sorted(hidden)} at version {view['version']}"
    if state.salt:
        assert state.salt.encode() not in doc, f"{reader} sees the deal's salt before it is revealed"
    hand = view["hand"]
    if hand is not None:
        assert hand["packets"] is None and not hand["audit"]
        if reader == SPECTATOR:
            assert hand["hand"] is None and hand["discards"] is None


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_no_mitigati_view_holds_a_card_its_reader_may_not_see(seed: int) -> None:
    entries = play_mitigati("m1", ["ana", "bo", "cy"], 2, random.Random(seed))
    projection = ViewsProjection()
    for (table_id, version, event), state in states_of(entries):
        projection.apply(table_id, version, event)
        for key, doc in projection.flush().items():
            if doc is not None and key.name.startswith("view:") and ":audit:" not in key.name:
                assert_reader_may_see(doc, state)


def test_a_seat_sees_its_own_packets_and_the_spectator_none() -> None:
    entries = play_mitigati("m1", ["ana", "bo", "cy"], 1, random.Random(2), close=False)
    docs = replay(ViewsProjection(), entries[:5])  # created, three seats, started
    assert decode(docs[DocKey(view_name("m1", "0"))])["hand"] is None
    projection = ViewsProjection()
    for (table_id, version, event), state in states_of(entries):
        projection.apply(table_id, version, event)
        out = projection.flush()
        if isinstance(event, mev.HandDealt):
            for seat in range(3):
                view = decode(out[DocKey(view_name(table_id, str(seat)))] or b"")
                assert view["variant"] == "mitigati" and len(view["hand"]["hand"]) == 10
                assert sorted(view["hand"]["hand"]) == sorted(state.hand.hands[seat])  # type: ignore[union-attr]
            spectator = decode(out[DocKey(view_name(table_id, SPECTATOR))] or b"")
            assert spectator["hand"]["hand"] is None and spectator["hand"]["hand_sizes"] == [10, 10, 10]
            return
    raise AssertionError("no deal")


def test_the_audit_view_of_each_ended_mitigati_hand_shows_the_deal_it_revealed() -> None:
    """What the replay route shows as the audit (``game.audit_view`` of the ended hand):
    its packets are the revealed card order."""
    entries = play_mitigati("m1", ["ana", "bo", "cy"], 3, random.Random(3))
    state = initial_state("m1")
    revealed = 0
    for _, _, event in entries:
        state = evolve(state, event)
        if isinstance(event, DealRevealed):
            revealed += 1
            assert state.hand is not None
            audit = msgspec.to_builtins(state.game.audit_view(state.hand, cut_short=True))
            packets = audit["packets"]
            assert [c for row in packets for p in row for c in p] == list(event.order)
            assert audit["audit"] and audit["phase"] in ("finished", "abandoned")
    assert revealed == 3


def test_a_mitigati_table_closed_mid_hand_shows_nobody_to_act() -> None:
    rng = random.Random(4)
    entries = play_mitigati("m1", ["ana", "bo", "cy"], 1, rng, close=False)
    state = initial_state("m1")
    for _, _, event in entries:
        state = evolve(state, event)
    extra: list[Entry] = []
    for submission in (next_submission(state, rng), next_submission(state, rng)):
        assert submission is not None
        for event in decide(state, submission):
            state = evolve(state, event)
            extra.append(("m1", len(entries) + len(extra) + 1, event))
        if state.hand is not None and not state.awaiting_deal:
            break
    for event in decide(state, Submission(command=CloseTable())):
        state = evolve(state, event)
        extra.append(("m1", len(entries) + len(extra) + 1, event))
    projection = ViewsProjection()
    for table_id, version, event in entries + extra:
        projection.apply(table_id, version, event)
    docs = projection.flush()  # what the worker stores, and announces
    for reader in ("0", "1", "2"):  # seat views of a closed table: a last word, no hand
        data = docs[DocKey(view_name("m1", reader))]
        assert isinstance(data, LastWord) and decode(data)["hand"] is None
    spectator = docs[DocKey(view_name("m1", SPECTATOR))]
    assert spectator is not None
    hand = decode(spectator)["hand"]
    assert hand["to_act"] is None and hand["legal"] == []


def mixed_tables(seed: int, count: int = 4, hands: int = 2) -> list[Entry]:
    rng = random.Random(seed)
    pool = [f"p{i:02d}" for i in range(1, 9)]
    tables = [
        play_mitigati(f"m{i}", rng.sample(pool, 3), hands, rng, close=i % 2 == 0) if i % 2 == 0
        else play_table(f"t{i}", rng.sample(pool, 5), hands, rng, close=i % 3 == 0)
        for i in range(count)
    ]
    return interleave(tables, rng)


def test_a_replay_of_mixed_games_gives_the_same_bytes_however_batched_or_resumed() -> None:
    entries = mixed_tables(5)
    for kind in ("views", "ledger", "directory"):
        whole = replay(new_projection(kind), entries)
        for batch in (1, 7, 100):
            assert replay(new_projection(kind), entries, batch=batch) == whole, (kind, batch)
    half = len(entries) // 2
    stored = replay(LedgerProjection(), entries[:half])
    second = LedgerProjection()
    for table_id in {t for t, _, _ in entries[half:]}:
        second.restore(table_id, stored.get(DocKey(table_name(table_id))))
    second.restore_players({k.field: v for k, v in stored.items() if k.name == PLAYERS_DOC and k.field})
    resumed = dict(stored)
    resumed.update(replay(second, entries[half:]))
    assert resumed == replay(LedgerProjection(), entries)


def test_the_mitigati_ledger_adds_up_and_an_abandoned_deal_is_scored_by_its_bargain() -> None:
    rng = random.Random(7)
    pool = [f"p{i:02d}" for i in range(1, 7)]
    tables = [play_mitigati(f"m{i}", rng.sample(pool, 3), 4, rng, abandon_first=i == 0) for i in range(5)]
    entries = interleave(tables, rng)
    docs = replay(LedgerProjection(), entries)
    outcomes = [e for _, _, e in entries if isinstance(e, mev.HandScored | mev.DealAbandoned)]
    assert any(isinstance(e, mev.DealAbandoned) for e in outcomes), "no abandoned deal in the sample"
    for table in tables:
        table_id = table[0][0]
        ledger = decode_table(docs[DocKey(table_name(table_id))])
        assert isinstance(ledger, MitigatiTableLedger) and len(ledger.hands) == 4
        mine = [e for _, _, e in table if isinstance(e, mev.HandScored | mev.DealAbandoned)]
        dealers = [e.dealer for _, _, e in table if isinstance(e, mev.HandDealt)]
        for line, event, dealer in zip(ledger.hands, mine, dealers, strict=True):
            assert line.scores == event.scores and sum(line.scores) == 0 and line.dealer == dealer
            if isinstance(event, mev.DealAbandoned):
                assert line.outcome == "abandoned" and line.points is None
                assert line.bargain is not None and line.bargain.amount == event.amount
            else:
                assert line.outcome == "finished" and line.points == event.points
        assert ledger.totals == tuple(map(sum, zip(*(line.scores for line in ledger.hands), strict=True)))
        assert ledger.hands[-1].totals == ledger.totals
    players = [decode_player(d) for k, d in docs.items() if k.name == PLAYERS_DOC]
    assert sum(p.total for p in players) == 0
    assert sum(p.hands for p in players) == 3 * len(outcomes)
    assert sum(p.declared for p in players) == 0


def test_the_directory_shows_a_mitigati_tables_variant() -> None:
    rng = random.Random(9)
    kept = play_mitigati("m1", ["ana", "bo", "cy"], 2, rng, close=False)
    mighty = play_table("t1", ["ana", "bo", "cy", "di", "ed"], 1, rng, close=False)
    docs = replay(DirectoryProjection(), kept + mighty)
    entry = decode_entry(docs[DocKey(DIRECTORY_DOC, "m1")])
    assert entry.variant == "mitigati" and entry.rules is None and entry.rules_fingerprint
    assert entry.status == "playing" and entry.seats == ("ana", "bo", "cy") and entry.hands_played == 2
    assert b'"variant"' not in (docs[DocKey(DIRECTORY_DOC, "t1")] or b"").split(b'"rules"')[0]

"""Mitigati at a table (domain/table.py through domain/games.py): three seats, deals as
data with the same commitment, the deal passing to the right, every hand of the match
scored (an abandoned deal by its bargain), the deal revealed when a hand ends or the table
closes mid-hand; the codec, verify and export for Mitigati tables."""

from __future__ import annotations

import random
from typing import Any

import pytest

from domain.codec import decode_command, decode_event, encode_event
from domain.errors import RuleError
from domain.mighty.commands import Bid
from domain.mitigati import commands as mcmd
from domain.mitigati import events as mev
from domain.mitigati.cards import DECK
from domain.mitigati.decider import deal_order, packets_from_order
from domain.mitigati.game import TableCreated as MitigatiTableCreated
from domain.mitigati.handfile import output_of, parse, replay
from domain.mitigati.state import Abandoned, Bargaining, Finished
from domain.table import (
    CloseTable,
    CreateTable,
    DealHand,
    DealRevealed,
    JoinSeat,
    PlayerResigned,
    Resign,
    Submission,
    TableClosed,
    TableEvent,
    deal_commitment,
    decide,
    evolve,
    initial_state,
)
from services.audit import export_hand, verify_events
from services.commands.tables import submission_from_wire, table_handler
from services.players import next_submission, seating
from services.store.base import StoredEvent
from tests.memory_store import InMemoryEventStore

PLAYERS = ["ann", "bob", "cy"]


def shuffled(seed: int) -> tuple[str, ...]:
    deck = list(DECK)
    random.Random(seed).shuffle(deck)
    return tuple(deck)


class Table:
    """A Mitigati table driven through ``decide``/``evolve``; a refusal fails the test."""

    def __init__(self, first_dealer: int = 0) -> None:
        self.state = initial_state("m1")
        self.events: list[TableEvent] = []
        self.send(CreateTable(variant="mitigati", name="tarot"), "ann")
        for submission in seating(PLAYERS)[:-1]:
            self.send(submission.command, submission.player)
        from domain.table import StartTable
        self.send(StartTable(first_dealer=first_dealer), "ann")

    def send(self, command: Any, player: str | None = None) -> list[TableEvent]:
        new = decide(self.state, Submission(command, player))
        for event in new:
            self.state = evolve(self.state, event)
        self.events.extend(new)
        return new

    def seat_of(self, seat: int) -> str:
        name = self.state.seats[seat]
        assert name is not None
        return name

    def play_hand(self, rng: random.Random) -> None:
        """Random legal commands until the current hand ends."""
        while True:
            move = next_submission(self.state, rng)
            if move is None or isinstance(move.command, DealHand):
                return
            self.send(move.command, move.player)


def test_a_mitigati_table_has_three_seats_and_its_own_created_event() -> None:
    table = Table()
    created = table.events[0]
    assert isinstance(created, MitigatiTableCreated) and created.rules.variant == "mitigati"
    assert table.state.seats == tuple(PLAYERS) and table.state.totals == (0, 0, 0)
    fresh = initial_state("m2")
    fresh = evolve(fresh, decide(fresh, Submission(CreateTable(variant="mitigati"), "ann"))[0])
    with pytest.raises(RuleError) as caught:
        decide(fresh, Submission(JoinSeat(seat=3), "dee"))
    assert caught.value.code == "malformed_command"


def test_a_mitigati_table_refuses_options() -> None:
    with pytest.raises(RuleError) as caught:
        decide(initial_state("m3"), Submission(CreateTable(variant="mitigati", options={"x": 1}), "ann"))
    assert caught.value.code == "unknown_option"


def test_the_deal_is_cut_into_packets_with_its_commitment_published_and_salt_kept_secret() -> None:
    table = Table(first_dealer=1)
    order = shuffled(1)
    [dealt] = table.send(DealHand(order=order, salt="s1"))
    assert isinstance(dealt, mev.HandDealt)
    assert dealt.dealer == 1 and dealt.commitment == deal_commitment(order, "s1") and dealt.salt == "s1"
    assert dealt.packets == packets_from_order(order, 1)
    assert len(dealt.packets[4][1]) == 8 and deal_order(dealt.packets) == order
    assert isinstance(table.state.hand, Bargaining) and table.state.salt == "s1"


def test_a_deal_must_be_the_78_card_deck() -> None:
    table = Table()
    with pytest.raises(RuleError) as caught:
        table.send(DealHand(order=shuffled(2)[:-1] + ("1D",), salt="x"))
    assert caught.value.code == "malformed_command"
    with pytest.raises(RuleError) as caught:
        table.send(DealHand(order=shuffled(2), salt="x"), "ann")
    assert caught.value.code == "not_allowed"


def test_the_deal_passes_to_the_right_after_every_hand_and_scores_are_totalled() -> None:
    table, rng = Table(first_dealer=0), random.Random(3)
    dealers, scores = [], []
    for n in range(6):
        [dealt] = table.send(DealHand(order=shuffled(10 + n), salt=f"s{n}"))
        assert isinstance(dealt, mev.HandDealt)
        dealers.append(dealt.dealer)
        table.play_hand(rng)
        hand = table.state.hand
        assert isinstance(hand, Finished | Abandoned)
        assert sum(hand.scores) == 0
        scores.append(hand.scores)
    assert dealers == [0, 2, 1, 0, 2, 1]  # (dealer + 2) % 3: to the right
    assert table.state.hands_scored == 6
    assert table.state.totals == tuple(sum(s[i] for s in scores) for i in range(3))


def test_a_finished_hand_reveals_its_deal_and_the_salt_opens_the_commitment() -> None:
    table = Table()
    order = shuffled(4)
    table.send(DealHand(order=order, salt="pepper"))
    table.play_hand(random.Random(4))
    revealed = table.events[-1]
    assert isinstance(revealed, DealRevealed)
    assert revealed.order == order and revealed.salt == "pepper" and revealed.hand_no == 0
    assert deal_commitment(revealed.order, revealed.salt) == revealed.commitment
    assert table.state.salt is None and table.state.awaiting_deal


def abandon(table: Table) -> list[TableEvent]:
    """R pays 3, L sells 3, the dealer accepts: the deal is abandoned (§4)."""
    dealer = table.state.dealer
    right, left = (dealer + 2) % 3, (dealer + 1) % 3
    table.send(mcmd.Bargain(seat=right, action="pay", amount=3), table.seat_of(right))
    table.send(mcmd.Bargain(seat=left, action="sell", amount=3), table.seat_of(left))
    return table.send(mcmd.Bargain(seat=dealer, action="pass"), table.seat_of(dealer))


def test_an_abandoned_deal_counts_as_a_hand_scored_by_its_bargain_and_is_revealed() -> None:
    table = Table(first_dealer=2)
    order = shuffled(5)
    table.send(DealHand(order=order, salt="abc"))
    events = abandon(table)
    assert isinstance(events[-2], mev.DealAbandoned) and isinstance(events[-1], DealRevealed)
    assert events[-1].order == order
    # dealer 2: R is 1 (pays), L is 0 (sells)
    assert table.state.totals == (3, -3, 0) and table.state.hands_scored == 1
    assert table.state.dealer == 1 and table.state.awaiting_deal
    [dealt] = table.send(DealHand(order=shuffled(6), salt="next"))
    assert isinstance(dealt, mev.HandDealt) and dealt.dealer == 1 and dealt.hand_no == 1


def test_resigning_mid_hand_reveals_the_deal_then_closes_the_table() -> None:
    table = Table()
    order = shuffled(7)
    table.send(DealHand(order=order, salt="mid"))
    table.send(mcmd.Bargain(seat=2, action="pass"), "cy")
    events = table.send(Resign(seat=1), "bob")
    assert [type(e) for e in events] == [PlayerResigned, DealRevealed, TableClosed]
    assert isinstance(events[1], DealRevealed) and events[1].order == order
    assert table.state.status == "closed" and table.state.hands_scored == 0
    with pytest.raises(RuleError) as caught:
        table.send(mcmd.Bargain(seat=0, action="pass"), "ann")
    assert caught.value.code == "table_closed"


def test_closing_between_hands_reveals_nothing_twice() -> None:
    table = Table()
    table.send(DealHand(order=shuffled(8), salt="a"))
    abandon(table)
    events = table.send(CloseTable(reason="done"))
    assert [type(e) for e in events] == [TableClosed]


def test_a_hand_command_from_another_player_or_another_game_is_refused() -> None:
    table = Table()
    table.send(DealHand(order=shuffled(9), salt="a"))
    with pytest.raises(RuleError) as caught:
        table.send(mcmd.Bargain(seat=2, action="pass"), "ann")
    assert caught.value.code == "not_your_seat"
    with pytest.raises(RuleError) as caught:
        table.send(Bid(seat=2, points=13, trump="S"), "cy")
    assert caught.value.code == "malformed_command"


# ---------------------------------------------------------------- codec, verify, export


def test_every_event_of_a_mitigati_table_round_trips_through_the_codec() -> None:
    table = Table()
    rng = random.Random(11)
    for n in range(3):
        table.send(DealHand(order=shuffled(20 + n), salt=f"s{n}"))
        table.play_hand(rng)
    table.send(CloseTable())
    for event in table.events:
        assert decode_event(encode_event(event)) == event


def test_a_command_is_decoded_for_its_tables_game() -> None:
    wire = {"type": "play", "seat": 1, "card": "KS"}
    assert isinstance(decode_command(wire, "mitigati"), mcmd.Play)
    assert not isinstance(decode_command(wire), mcmd.Play)  # Mighty's, by default
    bargain = submission_from_wire(b'{"type":"bargain","seat":0,"action":"pay","amount":4}', "ann", "mitigati")
    assert bargain.command == mcmd.Bargain(seat=0, action="pay", amount=4)
    with pytest.raises(RuleError) as caught:
        submission_from_wire(b'{"type":"bargain","seat":0,"action":"pass"}', "ann")
    assert caught.value.code == "malformed_command"


def stored_mitigati_table(hands: int, seed: int) -> list[StoredEvent]:
    store = InMemoryEventStore()
    handler = table_handler(store)
    rng = random.Random(seed)
    sent = [Submission(CreateTable(variant="mitigati"), "ann"), *seating(PLAYERS)]
    for n, sub in enumerate(sent):
        handler.handle("m1", sub, command_id=f"c{n}")
    n = len(sent)
    while True:
        state, _ = handler.state_of("m1")
        if state.hands_scored >= hands:
            handler.handle("m1", Submission(CloseTable()), command_id=f"c{n}")
            return store.read("m1")
        sub = next_submission(state, rng)
        assert sub is not None
        handler.handle("m1", sub, command_id=f"c{n}")
        n += 1


def test_verify_accepts_a_faithful_mitigati_table_and_names_an_edited_score() -> None:
    stored = stored_mitigati_table(hands=4, seed=12)
    verdict = verify_events("m1", stored)
    assert verdict.ok, verdict.finding
    assert verdict.hands == 4
    from dataclasses import replace

    from services.store.base import GENESIS, stored_hash

    target = next(i for i, e in enumerate(stored)
                  if b'"mitigati_hand_scored"' in e.data or b'"mitigati_deal_abandoned"' in e.data)
    edited = list(stored)
    import msgspec

    raw = msgspec.json.decode(stored[target].data)
    raw["scores"] = [*raw["scores"][1:], raw["scores"][0]]  # still sums to zero
    if raw["scores"] == msgspec.json.decode(stored[target].data)["scores"]:
        raw["scores"] = [s + d for s, d in zip(raw["scores"], (1, -1, 0), strict=True)]
    data = msgspec.json.encode(raw)
    edited[target] = replace(stored[target], data=data)
    prev, chained = GENESIS, []
    for event in edited:  # a forger rewrites the whole chain: the replay still catches it
        digest = stored_hash(prev, event)
        assert digest is not None
        chained.append(replace(event, prev_hash=prev, hash=digest))
        prev = digest
    verdict = verify_events("m1", chained)
    assert verdict.finding is not None and verdict.finding.version == stored[target].version


def test_an_exported_mitigati_hand_replays_to_the_stored_result() -> None:
    stored = stored_mitigati_table(hands=3, seed=13)
    events = [decode_event(e.data) for e in stored]
    ends = {e.hand_no: e for e in events if isinstance(e, DealRevealed)}
    outcomes = [e for e in events if isinstance(e, mev.HandScored | mev.DealAbandoned)]
    for hand_no, outcome in enumerate(outcomes):
        assert hand_no in ends
        document = export_hand("m1", stored, hand_no)
        assert document["rules"] == "mitigati"
        import msgspec

        hand_file, rules = parse(msgspec.json.encode(document))
        output = output_of(replay(hand_file, rules))
        assert "rejected" not in output
        assert output["phase"] == ("finished" if isinstance(outcome, mev.HandScored) else "abandoned")
        assert tuple(output["result"]["scores"]) == outcome.scores

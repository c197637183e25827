"""mighty verify / export: a faithful log verifies; any edit, deletion or reorder is named."""

from __future__ import annotations

import random
import re
from dataclasses import replace

import msgspec
import pytest

from domain.codec import decode_event, encode_event
from domain.mighty.events import CardsDiscarded, HandDealt, KittyExchanged, KittyTaken
from domain.mighty.handfile import output_of, parse, replay
from domain.table import CreateTable, Submission, TableEvent
from services.audit import HandInProgress, describe, export_hand, verify_events
from services.commands.tables import table_handler
from services.players import next_submission, seating
from services.store.base import GENESIS, StoredEvent, stored_hash
from tests.memory_store import InMemoryEventStore


def play_table(table_id: str, hands: int, seed: int) -> InMemoryEventStore:
    store = InMemoryEventStore()
    handler = table_handler(store)
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(5)]
    sent = [Submission(CreateTable(), "p0"), *seating(players)]
    for n, sub in enumerate(sent):
        handler.handle(table_id, sub, command_id=f"c{n}")
    n = len(sent)
    while True:
        state, _ = handler.state_of(table_id)
        if state.hands_scored >= hands:
            return store
        sub = next_submission(state, rng)
        assert sub is not None
        handler.handle(table_id, sub, command_id=f"c{n}")
        n += 1


@pytest.fixture(scope="module")
def stored() -> list[StoredEvent]:
    return play_table("t1", hands=2, seed=7).read("t1")


def rechain(events: list[StoredEvent]) -> list[StoredEvent]:
    """Recompute versions and hashes, as a forger who rewrites the whole chain would."""
    prev, out = GENESIS, []
    for version, event in enumerate(events, start=1):
        digest = stored_hash(prev, event)
        assert digest is not None
        out.append(replace(event, version=version, prev_hash=prev, hash=digest))
        prev = digest
    return out


def test_a_faithful_log_verifies(stored: list[StoredEvent]) -> None:
    verdict = verify_events("t1", stored)
    assert verdict.ok, verdict.finding
    assert verdict.hands >= 2


def test_an_edited_event_is_named(stored: list[StoredEvent]) -> None:
    k = 40
    edited = list(stored)
    edited[k] = replace(stored[k], data=stored[k].data[:-1] + b" }")  # same JSON, other bytes
    finding = verify_events("t1", edited).finding
    assert finding is not None and finding.version == stored[k].version
    assert "edited" in finding.problem


def test_a_deleted_event_is_named(stored: list[StoredEvent]) -> None:
    k = 30
    finding = verify_events("t1", stored[:k] + stored[k + 1:]).finding
    assert finding is not None and finding.version == stored[k + 1].version


def test_reordered_events_are_named(stored: list[StoredEvent]) -> None:
    k = 50
    swapped = stored[:k] + [stored[k + 1], stored[k]] + stored[k + 2:]
    finding = verify_events("t1", swapped).finding
    assert finding is not None and finding.version == stored[k + 1].version


def test_a_rechained_forgery_of_a_trick_winner_fails_the_replay(stored: list[StoredEvent]) -> None:
    k = next(i for i, e in enumerate(stored) if b'"type":"trick_won"' in e.data)
    event = msgspec.json.decode(stored[k].data)
    event["winner"] = (event["winner"] + 1) % 5
    forged = list(stored)
    forged[k] = replace(stored[k], data=msgspec.json.encode(event))
    finding = verify_events("t1", rechain(forged)).finding
    assert finding is not None and finding.version == k + 1
    assert "differs from what the rules derive" in finding.problem


def test_a_rechained_forgery_of_the_salt_breaks_the_commitment(stored: list[StoredEvent]) -> None:
    k = next(i for i, e in enumerate(stored) if b'"type":"deal_revealed"' in e.data)
    event = msgspec.json.decode(stored[k].data)
    event["salt"] = "00" * 16
    forged = list(stored)
    forged[k] = replace(stored[k], data=msgspec.json.encode(event))
    finding = verify_events("t1", rechain(forged)).finding
    assert finding is not None and finding.version == k + 1


def stored_scores(stored: list[StoredEvent], hand_no: int) -> list[int] | None:
    """The scores recorded for hand ``hand_no``, or None when it was thrown in."""
    events = [msgspec.json.decode(e.data) for e in stored]
    inside = False
    for event in events:
        if event["type"] == "hand_dealt":
            inside = event["hand_no"] == hand_no
        elif inside and event["type"] == "hand_scored":
            return list(event["scores"])
    return None


@pytest.mark.parametrize("hand_no", [0, 1])
def test_an_exported_hand_replays_to_the_stored_result(stored: list[StoredEvent], hand_no: int) -> None:
    document = export_hand("t1", stored, hand_no)
    hand_file, rules = parse(msgspec.json.encode(document))
    outcome = replay(hand_file, rules)
    assert outcome.rejected is None
    printed = output_of(outcome)
    assert printed["result"].get("scores") == stored_scores(stored, hand_no)
    assert printed["phase"] in ("finished", "redeal")


def test_a_hand_still_being_played_is_not_exported_unless_the_operator_insists(stored: list[StoredEvent]) -> None:
    deals = [i for i, e in enumerate(stored) if isinstance(decode_event(e.data), HandDealt)]
    mid_hand = stored[:deals[-1] + 12]  # the last hand, a few commands in
    with pytest.raises(HandInProgress, match="has not ended"):
        export_hand("t1", mid_hand, None)
    document = export_hand("t1", mid_hand, None, in_progress=True)
    assert len(document["commands"]) >= 1
    assert export_hand("t1", mid_hand, 0)["hands"]  # an earlier hand, ended, still exports


CARD_TOKEN = re.compile(r"(?<![0-9A-Za-z])(?:[2-9TJQKA][SHDC](?:#\d)?|JK\d?)(?![0-9A-Za-z])")


def logged(event: TableEvent) -> str:
    return describe(StoredEvent(version=1, data=encode_event(event), hash="", prev_hash="", command_id=""))


def test_the_log_never_shows_the_kitty_or_any_discard(stored: list[StoredEvent]) -> None:
    """docs/operations.md: `mighty log` hides the deal; the kitty is part of it and the discards
    are the declarer's alone until the hand ends (docs/rules/mighty.md §8)."""
    lines = [describe(e) for e in stored]
    for kind in ("hand_dealt", "cards_discarded"):
        found = [line for line in lines if f" {kind} " in line]
        assert found
        for line in found:
            assert not CARD_TOKEN.findall(line), line
    hidden_kitty = KittyTaken(seat=0, cards=("8D", "4S", "7D"), shown=False)
    assert not CARD_TOKEN.findall(logged(hidden_kitty))
    assert "8D" in logged(msgspec.structs.replace(hidden_kitty, shown=True))  # turned face up: public
    assert not CARD_TOKEN.findall(logged(KittyExchanged(seat=1, take="8D", discard="2C")))
    assert not CARD_TOKEN.findall(logged(CardsDiscarded(seat=0, cards=("2C", "4D", "5H"), taken=("8D", "4S", "7D"))))

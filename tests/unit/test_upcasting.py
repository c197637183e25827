"""Old stored event shapes read as today's (domain/upcasting.py). The first tests make up
the history of one event, ``trick_won``: at v0 its winner was ``won_by``, at v1
``winner_seat``, and today (v2 in these tests) ``winner``. The last ones read the real
version-1 events of Mighty, whose facts ``evolve`` derives from the hand."""

from __future__ import annotations

import msgspec
import pytest

from domain.codec import EventDecoder, decode_event, encode_event
from domain.errors import UnknownEventVersion
from domain.mighty.events import CardPlayed, FriendCalled, FriendRevealed, HandEvent, TrickWon
from domain.upcasting import Raw, Upcaster, as_recorded, as_version
from tests.unit.helpers import given, play_cards, ready_to_play, standard_deal

TODAY = {**EventDecoder().current, "trick_won": 2}


def rename(old: str, new: str) -> Upcaster:
    def step(raw: Raw) -> Raw:
        raw[new] = raw.pop(old)
        return raw
    return step


HISTORY: dict[tuple[str, int], Upcaster] = {
    ("trick_won", 0): rename("won_by", "winner_seat"),
    ("trick_won", 1): rename("winner_seat", "winner"),
}


def stored(**fields: object) -> bytes:
    return msgspec.json.encode({"type": "trick_won", "trick": 3, "leader": 1,
                                "cards": ["AS", "KS", "QS", "JS", "0S"], "points": 4, **fields})


def test_an_event_of_todays_shape_decodes_without_any_upcaster() -> None:
    def refuse(raw: Raw) -> Raw:
        raise AssertionError("an upcaster ran on today's shape")
    decoder = EventDecoder({("trick_won", 1): refuse})
    event = TrickWon(trick=3, leader=1, cards=("AS", "KS", "QS", "JS", "0S"), winner=2, points=4)
    assert decoder(encode_event(event)) == event


def test_an_older_shape_is_upcast_step_by_step_to_todays() -> None:
    decoder = EventDecoder(HISTORY, TODAY)
    event = decoder(stored(v=0, won_by=2))
    assert isinstance(event, TrickWon)
    assert (event.winner, event.v, event.points) == (2, 2, 4)
    assert decoder(stored(v=1, winner_seat=4)) == msgspec.structs.replace(event, winner=4)


def test_an_older_shape_that_still_decodes_is_upcast_too() -> None:
    """A change of meaning, not of shape: at v1 ``points`` counted tricks, not cards."""
    decoder = EventDecoder({("trick_won", 1): lambda raw: {**raw, "points": raw["points"] * 2}},
                           {**EventDecoder().current, "trick_won": 2})
    event = decoder(stored(v=1, winner=0))
    assert isinstance(event, TrickWon) and (event.points, event.v) == (8, 2)


def test_an_event_from_a_newer_release_is_refused_with_a_clear_error() -> None:
    with pytest.raises(UnknownEventVersion, match="version 3 was written by a newer release"):
        EventDecoder(HISTORY, TODAY)(stored(v=3, winner=0))


def test_an_old_version_no_upcaster_reads_is_refused() -> None:
    with pytest.raises(UnknownEventVersion, match="No upcaster reads a trick_won event of version 0"):
        EventDecoder({}, TODAY)(stored(v=0, won_by=2))


def test_a_broken_event_is_still_a_validation_error() -> None:
    with pytest.raises(msgspec.ValidationError):
        decode_event(stored(v=1))  # no winner, and no upcaster to blame


# ---------------------------------------------------------------- Mighty's version 1


def as_stored_v1(event: HandEvent) -> bytes:
    """What commit 4a6e5dd wrote for this event: the facts of v2 left out, ``v`` 1."""
    return msgspec.json.encode(as_version(msgspec.to_builtins(event), 1))


def test_version_1_events_read_with_their_facts_unset() -> None:
    called = FriendCalled(seat=0, call="card", card="QH", holder=1)
    played = CardPlayed(seat=0, card="3C", joker_call=True, joker_call_effective=True)
    revealed = FriendRevealed(seat=1, call="QH")
    assert decode_event(as_stored_v1(called)) == FriendCalled(seat=0, call="card", card="QH")
    assert decode_event(as_stored_v1(played)) == CardPlayed(seat=0, card="3C", joker_call=True)
    assert decode_event(as_stored_v1(revealed)) == FriendRevealed(seat=1)
    assert as_stored_v1(played) == b'{"type":"card_played","seat":0,"card":"3C","suit":null,"joker_call":true,"v":1}'


def test_a_hand_stored_at_version_1_folds_to_the_state_todays_events_fold_to() -> None:
    """The friend's seat, the joker call's effect and each revealed call, derived from the
    hand for the old events, come out as the facts the new events carry."""
    events = play_cards(ready_to_play(standard_deal(), discards="4C 2C KD", friend="QH"),
                        "AC KC JC 9C 7C", "3C QC TC 8C JK", "QH")  # seat 1 wins trick 2, leads QH
    kinds = {type(e) for e in events}
    assert {FriendCalled, FriendRevealed} <= kinds and any(isinstance(e, CardPlayed) and e.joker_call for e in events)
    old = [decode_event(as_stored_v1(e)) for e in events]
    assert old != events  # the facts are not in the old events ...
    assert given(old).state == given(events).state  # ... yet the hand is the same


def test_verify_compares_only_the_facts_an_event_recorded() -> None:
    derived = FriendCalled(seat=0, call="card", card="QH", holder=1)
    assert as_recorded(derived, FriendCalled(seat=0, call="card", card="QH")) == FriendCalled(
        seat=0, call="card", card="QH")
    assert as_recorded(derived, FriendCalled(seat=0, call="card", card="QH", holder=2)) == derived
    assert as_recorded(derived, CardPlayed(seat=0, card="QH")) == derived


def test_only_added_facts_are_left_out_of_an_earlier_shape() -> None:
    assert as_version({"type": "friend_revealed", "v": 2, "seat": 1, "call": "QH"}, 1) == {
        "type": "friend_revealed", "seat": 1, "v": 1}
    with pytest.raises(ValueError, match="more than added facts"):
        as_version({"type": "trick_won", "v": 2, "winner": 1}, 1)

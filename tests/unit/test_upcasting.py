"""Old stored event shapes read as today's (domain/upcasting.py). No shape has changed
yet, so these tests make up the history of one event, ``trick_won``: at v0 its winner
was ``won_by``, at v1 ``winner_seat``, and today (v2 in these tests) ``winner``."""

from __future__ import annotations

import msgspec
import pytest

from domain.codec import EventDecoder, decode_event, encode_event
from domain.errors import UnknownEventVersion
from domain.mighty.events import TrickWon
from domain.upcasting import Raw, Upcaster

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

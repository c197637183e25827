"""Rules audit (docs/rules/mighty.md §1-§8, §10): behaviours pinned while checking the
engine against the rule text, each named after what the rules say."""

from __future__ import annotations

import msgspec
import pytest

from domain.mighty.events import HandEvent
from domain.mighty.views import seat_view, spectator_view
from tests.unit.helpers import given, play, play_cards, ready_to_play, rules, standard_deal

# Seat 0 declares 13 H, keeps the Ripper (3C) and discards 4C 2C KD; seat 4 holds the
# Joker (see tests/unit/test_play.py for the hands).


def declared_play() -> list[HandEvent]:
    return ready_to_play(standard_deal(rules(joker_call="declared")), discards="4C 2C KD")


# ---------------------------------------------------------------- §5 joker call, §8 views


def test_a_declared_joker_call_is_public_while_its_trick_is_played() -> None:
    """§5 `joker_call = declared`: the leader chooses whether the Ripper lead calls the
    Joker; the choice is part of the play everybody sees (§8), not only the Joker's holder."""
    called = play_cards(declared_play(), "AC KC JC 9C 7C", "3C!")
    quiet = play_cards(declared_play(), "AC KC JC 9C 7C", "3C?")
    for events, expected in ((called, True), (quiet, False)):
        state = given(events).state
        for view in (spectator_view(state), *(seat_view(state, s) for s in range(5))):
            assert view.joker_call is expected


def test_a_joker_call_field_appears_only_where_the_leader_declares_it() -> None:
    """With the default `joker_call = on_ripper_lead` every Ripper lead outside trick 1
    calls: the view stays as it was, without the field."""
    events = play_cards(ready_to_play(standard_deal(), discards="4C 2C KD"),
                        "AC KC JC 9C 7C", "3C")
    state = given(events).state
    assert b"joker_call" not in msgspec.json.encode(spectator_view(state))


@pytest.mark.parametrize("name", ["AS#1", "JK1", "KH#2"])
def test_a_two_pack_name_is_not_a_card_in_a_one_pack_game(name: str) -> None:
    """docs/hand-files.md: "a string that is not a card" is malformed_command; docs/rules/mighty.md §10.1
    makes the pack-numbered names the cards of two-pack games only, as plain names are
    not cards there."""
    events = ready_to_play(standard_deal(), discards="4C 2C KD")
    error = given(events).when(play(0, name)).refused("malformed_command")
    assert name in error.message

"""docs/rules/mighty.md §8: what each seat, a spectator and the audit may see."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from domain.mighty.commands import CallFriend, Play
from domain.mighty.events import HandEvent, MisdealClaimed
from domain.mighty.legal import legal_commands
from domain.mighty.views import audit_view, seat_view, spectator_view
from tests.unit.helpers import (
    STANDARD_HANDS,
    STANDARD_KITTY,
    auction_to,
    cards,
    discard,
    given,
    pass_,
    play_cards,
    ready_to_play,
    rules,
    run,
    standard_deal,
)
from tests.unit.test_play import LINE


def text(view: object) -> str:
    return msgspec.json.encode(view).decode()


def bidding() -> list[HandEvent]:
    return [standard_deal()]


def exchange(**options: Any) -> list[HandEvent]:
    return run(auction_to(standard_deal(rules(**options)), 0, "13 H"), discard(0, "4C 2C KD"))


def playing(friend: str = "QH", **options: Any) -> list[HandEvent]:
    return ready_to_play(standard_deal(rules(**options)), discards="4C 2C KD", friend=friend)


def test_a_seat_sees_its_own_hand_sorted_and_only_the_sizes_of_the_others() -> None:
    view = seat_view(given(bidding()).state, 2)
    assert view.hand == ("6S", "5S", "4S", "9H", "8H", "7H", "TD", "9D", "JC", "TC")
    assert view.hand_sizes == (10, 10, 10, 10, 10)
    for seat, hand in enumerate(STANDARD_HANDS):
        if seat != 2:
            assert not set(cards(hand)) & set(text(view).replace('"', " ").split())


def test_a_spectator_sees_no_hand_at_all() -> None:
    view = spectator_view(given(playing()).state)
    assert view.hand is None and view.legal == ()
    assert view.viewer is None


def test_nobody_sees_the_kitty_during_the_auction() -> None:
    state = given(bidding()).state
    for seat in range(5):
        assert seat_view(state, seat).kitty is None
    assert spectator_view(state).kitty is None


def test_the_kitty_is_shown_to_everyone_once_the_declarer_takes_it() -> None:
    state = given(exchange()).state
    for seat in range(5):
        assert seat_view(state, seat).kitty == cards(STANDARD_KITTY)
    assert spectator_view(state).kitty == cards(STANDARD_KITTY)


def test_with_kitty_shown_off_only_the_declarer_sees_the_kitty() -> None:
    state = given(exchange(kitty_shown=False)).state
    assert seat_view(state, 0).kitty == cards(STANDARD_KITTY)
    for seat in range(1, 5):
        assert seat_view(state, seat).kitty is None
    assert spectator_view(state).kitty is None


def test_only_the_declarer_sees_the_discards() -> None:
    for state in (given(exchange()).state, given(playing()).state):
        assert seat_view(state, 0).discards == cards("4C 2C KD")
        for seat in range(1, 5):
            assert seat_view(state, seat).discards is None
            assert "KD" not in text(seat_view(state, seat))
        assert spectator_view(state).discards is None


def test_the_friend_call_is_public_but_the_friend_is_known_only_to_the_friend() -> None:
    state = given(playing("QH")).state
    for seat in range(5):
        view = seat_view(state, seat)
        assert view.friend_call == ("card", "QH") and not view.friend_known
        assert view.friend == (1 if seat == 1 else None)
    assert spectator_view(state).friend is None


def test_playing_the_called_card_reveals_the_friend_to_all() -> None:
    state = given(play_cards(playing("QH"), "KS 9S 6S 3S 2H", "3H KH QH")).state
    assert state.friend_known  # type: ignore[union-attr]
    for seat in range(5):
        assert seat_view(state, seat).friend == 1
    assert spectator_view(state).friend == 1


def test_the_first_trick_friend_is_public_once_the_first_trick_is_won() -> None:
    events = playing("first_trick")
    state = given(events).state
    assert all(seat_view(state, s).friend is None for s in range(5))
    state = given(play_cards(events, "KS 9S 6S 3S 2H")).state
    assert all(seat_view(state, s).friend == 4 for s in range(5))


def test_a_none_call_tells_everyone_there_is_no_friend() -> None:
    state = given(playing("none")).state
    assert all(seat_view(state, s).friend_known for s in range(5))
    assert all(seat_view(state, s).friend is None for s in range(5))


def test_every_card_played_and_every_trick_winner_is_public() -> None:
    state = given(play_cards(playing(), "KS 9S 6S 3S 2H", "5D AD")).state
    view = spectator_view(state)
    assert [(t.leader, t.cards, t.winner) for t in view.tricks] == [(0, ("KS", "9S", "6S", "3S", "2H"), 4)]
    assert view.trick is not None and view.trick.cards == ("5D", "AD") and view.led_suit == "D"
    assert view.face_up_points == (0, 0, 0, 0, 1)


def test_a_seats_view_lists_exactly_its_legal_commands() -> None:
    state = given(play_cards(playing(), "KS")).state
    view = seat_view(state, 1)
    assert view.legal == tuple(legal_commands(state, 1))
    assert {c.card for c in view.legal if isinstance(c, Play)} == {"9S", "8S", "7S"}
    assert seat_view(state, 2).legal == ()


def test_the_contract_and_the_declarer_are_public_after_the_auction() -> None:
    state = given(exchange()).state
    view = spectator_view(state)
    assert view.declarer == 0 and view.contract == (13, "H") and view.phase == "exchange"


def test_the_views_show_the_scores_when_the_hand_ends() -> None:
    state = given(play_cards(ready_to_play(standard_deal(), discards=STANDARD_KITTY), *LINE)).state
    view = spectator_view(state)
    assert view.phase == "finished" and view.scores == (4, -1, -1, -1, -1)
    assert view.declarer_side_points == 18 and view.made


def test_the_audit_view_exists_only_after_the_hand_ends() -> None:
    with pytest.raises(ValueError):
        audit_view(given(playing()).state)


def test_the_audit_view_shows_everything() -> None:
    state = given(play_cards(ready_to_play(standard_deal(), discards=STANDARD_KITTY), *LINE)).state
    view = audit_view(state)
    assert view.audit and view.dealt == tuple(cards(h) for h in STANDARD_HANDS)
    assert view.kitty == cards(STANDARD_KITTY) and view.discards == cards(STANDARD_KITTY)


def test_the_audit_view_of_a_passed_out_deal_shows_the_deal() -> None:
    state = given(run(bidding(), *[pass_(s) for _ in range(2) for s in range(5)])).state
    view = audit_view(state)
    assert view.phase == "redeal" and view.dealt == tuple(cards(h) for h in STANDARD_HANDS)


def test_the_declarer_never_sees_the_friends_hand() -> None:
    view = text(seat_view(given(playing("QH")).state, 0))
    for card in cards(STANDARD_HANDS[1]):
        assert (f'"{card}"' in view) == (card == "QH")


def test_the_friend_sees_their_own_role_before_the_reveal() -> None:
    view = seat_view(given(playing("JK")).state, 4)
    assert view.friend == 4 and not view.friend_known


def test_call_friend_choices_in_the_declarers_legal_list_name_only_cards_it_does_not_hold() -> None:
    state = given(exchange()).state
    held = set(state.hands[0]) | set(cards("4C 2C KD"))
    calls = [c.friend for c in seat_view(state, 0).legal if isinstance(c, CallFriend)]
    assert calls and not held & set(calls)
    assert set(calls) >= {"first_trick", "none"}



def test_the_declarer_is_told_how_many_cards_to_discard_not_every_set_of_them() -> None:
    state = given(exchange()[:-1]).state  # the kitty taken, nothing discarded yet
    view = seat_view(state, 0)
    assert view.discard_count == 3 and view.legal == ()
    assert len(legal_commands(state, 0)) == 286  # C(13, 3): all of them stay in legal_commands
    assert seat_view(state, 1).discard_count is None


def test_every_seat_and_the_spectator_see_why_a_deal_was_thrown_in_and_who_claimed_it() -> None:
    dealt = standard_deal(rules(misdeal_claim=True), dealer=1)
    claimed = given(dealt, MisdealClaimed(seat=4)).state
    passed_out = given(run([standard_deal()], *[pass_(s % 5) for s in range(10)])).state
    for state, reason, claimant in ((claimed, "misdeal", 4), (passed_out, "passed_out", None)):
        for view in (*(seat_view(state, s) for s in range(5)), spectator_view(state)):
            assert (view.phase, view.redeal, view.claimed_by) == ("redeal", reason, claimant)
    bidding = msgspec.json.decode(msgspec.json.encode(spectator_view(given(dealt).state)))
    assert "redeal" not in bidding and "claimed_by" not in bidding  # only a thrown-in deal says it

"""docs/rules/mighty.md §10: mighty-6, mighty-7 and mighty-8 — two packs, four jokers, up to two
friends. One test per rule, each from an explicit deal.

``large_deal`` writes a 108/104/102-card deal readably: each seat lists the cards the test
is about (``-S`` marks a seat that holds no other spade); the rest of the deck tops the
hands up in deck order. Unnamed jokers and Mighties go to the kitty first, which the
declarer discards whole, so no card the test does not name can decide a trick.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec
import pytest

from domain.errors import HandFileError
from domain.mighty.cards import mighties, rippers
from domain.mighty.commands import CallFriend, Discard, HandCommand, Play
from domain.mighty.decider import deal_event
from domain.mighty.events import (
    DeclarerAlone,
    FriendCalled,
    FriendRevealed,
    HandDealt,
    HandEvent,
    TrickWon,
)
from domain.mighty.handfile import parse, replay, result_of
from domain.mighty.legal import legal_commands
from domain.mighty.rules import VARIANTS, make_rules
from domain.mighty.scoring import hand_scores, pagat_stake
from domain.mighty.state import Finished, Playing
from domain.mighty.views import seat_view, spectator_view
from domain.table import CreateTable, DealHand, JoinSeat, StartTable, Submission, initial_state
from domain.table import decide as table_decide
from domain.table import evolve as table_evolve
from tests.unit.helpers import (
    auction_to,
    bid,
    call,
    change_trump,
    discard,
    fold,
    given,
    pass_,
    play,
    play_cards,
    ready_to_play,
    run,
    standard_deal,
)

# ---------------------------------------------------------------- deals


def large_deal(variant: str, *seats: str, kitty: str = "", dealer: int = 0,
               **options: Any) -> HandDealt:
    spec = VARIANTS[variant]
    listed = [[t for t in s.split() if not t.startswith("-")] for s in seats]
    listed += [[] for _ in range(spec.players - len(listed))]
    voids = [{t[1:] for t in s.split() if t.startswith("-")} for s in seats]
    voids += [set() for _ in range(spec.players - len(voids))]
    named = {c for hand in listed for c in hand} | set(kitty.split())
    assert len(named) == sum(map(len, listed)) + len(kitty.split()), "a card named twice"
    pool = [c for c in spec.deck if c not in named]
    special = [c for c in pool if c.startswith("JK") or c[:2] in ("AS", "AD")]
    rest = kitty.split()
    for card in special:
        if len(rest) < spec.kitty_size:
            rest.append(card)
            pool.remove(card)
    hands: list[list[str]] = [list(h) for h in listed]
    for seat in sorted(range(spec.players), key=lambda s: -len(voids[s])):
        for card in list(pool):
            if len(hands[seat]) == spec.hand_size:
                break
            if card[1] not in voids[seat] or card.startswith("JK"):
                hands[seat].append(card)
                pool.remove(card)
    rest += pool[:spec.kitty_size - len(rest)]
    dealt = tuple(tuple(h) for h in hands)
    assert all(len(h) == spec.hand_size for h in dealt), [len(h) for h in dealt]
    assert Counter(c for h in dealt for c in h) + Counter(rest) == Counter(spec.deck)
    return deal_event(make_rules(variant, options), dealer=dealer, hands=dealt, kitty=tuple(rest))


def to_play(dealt: HandDealt, friend: str | tuple[str, ...] = "none", contract: str = "25 H",
            trump_change: str | None = None) -> list[HandEvent]:
    """Seat 0 wins the auction, discards the kitty it took, and calls ``friend``."""
    events = auction_to(dealt, 0, contract)
    events = run(events, discard(0, " ".join(dealt.kitty)))
    if trump_change is not None:
        events = run(events, change_trump(0, trump_change))
    return run(events, CallFriend(seat=0, friend=friend))


def playing(events: list[HandEvent]) -> Playing:
    state = fold(events)
    assert isinstance(state, Playing)
    return state


def winners(events: list[HandEvent]) -> list[int]:
    return [e.winner for e in events if isinstance(e, TrickWon)]


# Trick 1 in these deals: seat 0 leads AD#1 (not the Mighty with hearts trump) and wins it;
# everyone follows with a low diamond. Seat 0 then leads trick 2.
DIAMONDS = ("AD#1", "2D#1", "3D#1", "4D#1", "5D#1", "6D#1")
TRICK_1 = " ".join(DIAMONDS)


# ---------------------------------------------------------------- §1 cards and names


def test_both_copies_are_the_mighty_and_a_trump_change_moves_both_with_the_ripper() -> None:
    assert mighties("H", 2) == {"AS#1", "AS#2"} and mighties("S", 2) == {"AD#1", "AD#2"}
    assert rippers("H", "3", 2) == {"3C#1", "3C#2"} and rippers("C", "3", 2) == {"3S#1", "3S#2"}
    events = to_play(large_deal("mighty-6"), contract="25 H", trump_change="S")
    state = playing(events)
    assert state.trump == "S" and state.points == 27


def test_every_two_pack_deck_keeps_all_forty_point_cards() -> None:
    for name in ("mighty-6", "mighty-7", "mighty-8"):
        deck = VARIANTS[name].deck
        assert sum(c[0] in "AKQJT" for c in deck if not c.startswith("JK")) == 40
        assert sum(c.startswith("JK") for c in deck) == 4


@pytest.mark.parametrize("command", [
    Play(seat=0, card="AS"), Play(seat=0, card="JK", suit="S"), Play(seat=0, card="AS#3"),
    Play(seat=0, card="JK5", suit="S"),
])
def test_a_plain_name_is_no_card_in_a_two_pack_command(command: HandCommand) -> None:
    given(to_play(large_deal("mighty-6"))).when(command).refused("malformed_command")


def test_a_plain_name_is_malformed_in_a_discard_and_a_friend_call() -> None:
    dealt = large_deal("mighty-6")
    events = auction_to(dealt, 0, "25 H")
    given(events).when(Discard(seat=0, cards=("AS", *dealt.kitty[1:]))).refused("malformed_command")
    events = run(events, discard(0, " ".join(dealt.kitty)))
    given(events).when(call(0, "KH")).refused("malformed_command")
    given(events).when(CallFriend(seat=0, friend=("KH#1", "JK"))).refused("malformed_command")


def test_a_two_pack_name_not_in_the_variants_deck_is_refused_by_its_command() -> None:
    dealt = large_deal("mighty-7")
    events = auction_to(dealt, 0, "25 H")
    given(events).when(Discard(seat=0, cards=("2C#1", *dealt.kitty[1:]))).refused("bad_discard")
    events = run(events, discard(0, " ".join(dealt.kitty)))
    given(events).when(call(0, "2C#1")).refused("bad_friend_call")
    events = run(events, call(0, "none"))
    given(events).when(play(0, "2C#1")).refused("card_not_in_hand")


def test_a_plain_name_in_a_two_pack_deal_is_a_broken_hand_file() -> None:
    dealt = large_deal("mighty-8")
    hands = [list(h) for h in dealt.hands]
    hands[0][0] = hands[0][0].split("#")[0] if "#" in hands[0][0] else "JK"
    document = {"format": "mighty-hand/1", "rules": "mighty-8", "dealer": 0, "hands": hands,
                "kitty": list(dealt.kitty)}
    with pytest.raises(HandFileError):
        parse(msgspec.json.encode(document))


# ---------------------------------------------------------------- §5 winner


def test_of_two_identical_cards_the_first_played_wins() -> None:
    dealt = large_deal("mighty-6", "KD#1", "KD#2", "2D#1", "3D#1", "4D#1", "5D#1")
    events = play_cards(to_play(dealt), "KD#1 KD#2 2D#1 3D#1 4D#1 5D#1")
    assert winners(events) == [0]
    dealt = large_deal("mighty-6", "5D#1", "KD#2", "KD#1", "3D#1", "4D#1", "2D#1")
    events = play_cards(to_play(dealt), "5D#1 KD#2 KD#1 3D#1 4D#1 2D#1")
    assert winners(events) == [1]


def test_of_two_identical_trumps_the_first_played_wins() -> None:
    dealt = large_deal("mighty-6", "5D#1", "-D KH#2", "-D KH#1", "3D#1", "4D#1", "2D#1")
    events = play_cards(to_play(dealt), "5D#1 KH#2 KH#1 3D#1 4D#1 2D#1")
    assert winners(events) == [1]


def test_the_first_of_the_two_mighties_wins() -> None:
    dealt = large_deal("mighty-6", "5D#1", "2D#1", "AS#2", "AS#1", "4D#1", "3D#1")
    events = play_cards(to_play(dealt), "5D#1 2D#1 AS#2 AS#1 4D#1 3D#1")
    assert winners(events) == [2]


def test_the_first_joker_with_power_wins() -> None:
    dealt = large_deal("mighty-6", "AD#1 7C#1", "2D#1 JK1", "3D#1 JK2", "4D#1 8C#1", "5D#1 9C#1",
                       "6D#1 TC#1")
    events = play_cards(to_play(dealt), TRICK_1, "7C#1 JK1 JK2 8C#1 9C#1 TC#1")
    assert winners(events) == [0, 1]


def test_no_joker_has_power_in_the_first_trick() -> None:
    dealt = large_deal("mighty-6", "5D#1", "JK1", "KD#1", "2D#1", "3D#1", "4D#1")
    events = play_cards(to_play(dealt), "5D#1 JK1 KD#1 2D#1 3D#1 4D#1")
    assert winners(events) == [2]


# ---------------------------------------------------------------- §5 joker call, following


def test_every_joker_holder_must_answer_a_joker_call() -> None:
    dealt = large_deal("mighty-6", "AD#1 3C#2", "2D#1 JK1 8C#1", "3D#1 9C#1", "4D#1 JK2 8C#2 AS#1",
                       "5D#1 TC#1", "6D#1 JC#1")
    events = play_cards(to_play(dealt), TRICK_1, "3C#2")
    given(events).when(play(1, "8C#1")).refused("must_play_joker")
    events = play_cards(events, "JK1 9C#1")
    given(events).when(play(3, "8C#2")).refused("must_play_joker")  # one answer does not excuse another
    given(events).when(play(3, "AS#1")).accepted()  # a Mighty instead
    events = play_cards(events, "JK2 TC#1 JC#1")
    assert winners(events) == [0, 5]  # no joker has power after a joker call: highest club


def test_the_leaders_own_jokers_are_not_called() -> None:
    dealt = large_deal("mighty-6", "AD#1 3C#2 JK1", "2D#1 8C#1", "3D#1 9C#1", "4D#1 8C#2",
                       "5D#1 TC#1", "6D#1 JC#1")
    events = play_cards(to_play(dealt), TRICK_1, "3C#2")
    assert not playing(events).joker_called
    given(events).when(play(1, "8C#1")).accepted()


def test_leading_the_other_ripper_later_calls_again() -> None:
    dealt = large_deal("mighty-6", "AD#1 3C#1 3C#2", "-C 2D#1 7D#1 JK1 JK2", "3D#1 2C#1",
                       "4D#1 2C#2", "-C 5D#1 8D#1", "-C 6D#1 9D#1")
    events = play_cards(to_play(dealt), TRICK_1, "3C#1 JK1 2C#1 2C#2 8D#1 9D#1")
    assert winners(events) == [0, 0]  # the powerless joker loses to the Ripper itself
    events = play_cards(events, "3C#2")
    given(events).when(play(1, "7D#1")).refused("must_play_joker")


def test_a_mighty_counts_as_a_card_of_its_own_suit_for_following() -> None:
    dealt = large_deal("mighty-6", "AD#1 KS#1", "-S 2D#1 AS#1 8C#1", "3D#1 9S#1", "4D#1 8S#1",
                       "5D#1 7S#1", "6D#1 6S#1")
    events = play_cards(to_play(dealt), TRICK_1, "KS#1")
    given(events).when(play(1, "8C#1")).refused("must_follow_suit")
    assert {p.card for p in legal_commands(playing(events), 1)} == {"AS#1"}  # type: ignore[union-attr]


def test_the_first_trick_may_not_be_led_with_either_ripper_but_a_mighty_may_lead() -> None:
    dealt = large_deal("mighty-6", "AS#1 3C#1 5D#1")
    events = to_play(dealt)
    given(events).when(play(0, "3C#1")).refused("illegal_first_lead")
    given(events).when(play(0, "AS#1")).accepted()


# ---------------------------------------------------------------- §4 friend calls


def test_two_calls_name_two_friends_each_revealed_when_its_card_is_played() -> None:
    dealt = large_deal("mighty-6", "AD#1", "2D#1", "3D#1 KH#2 -H", "4D#1", "5D#1 QS#1", "6D#1")
    events = to_play(dealt, friend=("KH#2", "QS#1"))
    assert [e for e in events if isinstance(e, FriendCalled)] == [
        FriendCalled(seat=0, call="card", card="KH#2", holder=2),
        FriendCalled(seat=0, call="card", card="QS#1", holder=4)]
    state = playing(events)
    assert state.friends == (2, 4) and not state.friend_known and state.revealed == ()
    events = play_cards(events, "AD#1 2D#1 3D#1 4D#1 5D#1 6D#1")
    assert playing(events).revealed == ()


def test_one_player_holding_both_called_cards_is_one_friend() -> None:
    dealt = large_deal("mighty-6", "AD#1", "2D#1", "3D#1 KH#2 QS#1")
    state = playing(to_play(dealt, friend=("QS#1", "KH#2")))
    assert state.friends == (2,)


def test_calling_the_identical_copy_of_a_card_the_declarer_holds_is_allowed() -> None:
    dealt = large_deal("mighty-6", "AD#1 KH#1", "2D#1", "3D#1 KH#2")
    assert playing(to_play(dealt, friend="KH#2")).friends == (2,)


@pytest.mark.parametrize("friend", [
    ("KH#2",), ("KH#2", "QS#1", "JS#1"), ("KH#2", "KH#2"), ("none", "KH#2"), ("KH#1", "KH#2"),
])
def test_a_list_of_calls_must_be_two_different_cards_or_first_trick(friend: tuple[str, ...]) -> None:
    dealt = large_deal("mighty-6", "AD#1 KH#1", "2D#1", "3D#1 KH#2")
    events = run(auction_to(dealt, 0, "25 H"), discard(0, " ".join(dealt.kitty)))
    given(events).when(CallFriend(seat=0, friend=friend)).refused("bad_friend_call")


def test_a_discarded_card_cannot_be_called_nor_first_trick_when_the_option_is_off() -> None:
    dealt = large_deal("mighty-6", "AD#1", first_trick_friend_allowed=False)
    events = run(auction_to(dealt, 0, "25 H"), discard(0, " ".join(dealt.kitty)))
    given(events).when(CallFriend(seat=0, friend=(dealt.kitty[0], "KH#2"))).refused("bad_friend_call")
    given(events).when(CallFriend(seat=0, friend=("first_trick", "KH#2"))).refused("bad_friend_call")


def test_a_list_of_calls_in_a_one_pack_variant_stays_malformed() -> None:
    events = ready_to_play(standard_deal(), discards="4C 3C 2C", friend="QH")[:-1]
    given(events).when(CallFriend(seat=0, friend=("QH", "KC"))).refused("malformed_command")


def test_playing_the_identical_copy_of_a_called_card_reveals_nothing() -> None:
    dealt = large_deal("mighty-6", "AD#1 AD#2", "-D 2D#1 KH#1", "3D#1 KH#2", "4D#1", "5D#1", "6D#1")
    events = to_play(dealt, friend="KH#2")
    events = play_cards(events, TRICK_1, "AD#2 KH#1")  # seat 1 holds no diamond: it trumps
    assert not any(isinstance(e, FriendRevealed) for e in events)


def test_first_trick_reveals_its_winner_when_trick_one_ends() -> None:
    dealt = large_deal("mighty-6", "5D#1", "KD#1", "2D#1 QS#1", "3D#1", "4D#1", "6D#1")
    events = to_play(dealt, friend=("first_trick", "QS#1"))
    events = play_cards(events, "5D#1 KD#1 2D#1 3D#1 4D#1 6D#1")
    assert events[-1] == FriendRevealed(seat=1, call="first_trick")
    state = playing(events)
    assert state.friends == (1, 2) and state.revealed == (1,) and not state.friend_known


def test_first_trick_won_by_the_declarer_names_nobody() -> None:
    dealt = large_deal("mighty-6", "AD#1", "2D#1", "3D#1 QS#1", "4D#1", "5D#1", "6D#1")
    events = play_cards(to_play(dealt, friend=("first_trick", "QS#1")), TRICK_1)
    assert events[-1] == DeclarerAlone()
    assert playing(events).friends == (2,)


def test_a_none_call_has_no_friend_and_the_result_says_friends_at_once() -> None:
    dealt = large_deal("mighty-7")
    state = playing(to_play(dealt))
    assert state.friends == () and state.friend_known
    assert result_of(state)["friends"] == [] and "friend" not in result_of(state)


# ---------------------------------------------------------------- views


def test_the_friends_stay_hidden_until_revealed_and_each_friend_knows_it_is_one() -> None:
    dealt = large_deal("mighty-6", "AD#1 5S#1", "2D#1 6S#1", "3D#1 KH#2 7S#1", "4D#1 8S#1",
                       "5D#1 QS#1", "6D#1")
    events = to_play(dealt, friend=("KH#2", "QS#1"))
    state = playing(events)
    assert spectator_view(state).friends == () and spectator_view(state).friend is None
    assert seat_view(state, 2).friend == 2 and seat_view(state, 4).friend == 4
    assert seat_view(state, 1).friend is None and seat_view(state, 0).friend is None
    assert "friends" not in result_of(state)
    events = play_cards(events, TRICK_1, "5S#1 6S#1 7S#1 8S#1 QS#1")
    state = playing(events)
    assert spectator_view(state).friends == (4,) and not state.friend_known
    assert "friends" not in result_of(state)


# ---------------------------------------------------------------- §6 scoring

FIXED = [  # variant, friends, made multipliers (declarer, then each friend, each defender)
    ("mighty-6", (1, 2), 1), ("mighty-6", (1,), 3), ("mighty-6", (), 5),
    ("mighty-7", (1, 2), 2), ("mighty-7", (1,), 4), ("mighty-7", (), 6),
    ("mighty-8", (1, 2), 3), ("mighty-8", (1,), 5), ("mighty-8", (), 7),
]


@pytest.mark.parametrize(("variant", "friends", "declarer_times"), FIXED)
def test_the_fixed_score_pays_each_row_of_the_table(variant: str, friends: tuple[int, ...],
                                                   declarer_times: int) -> None:
    ruleset = make_rules(variant, {"score": "fixed"})
    n = ruleset.spec.players
    for contract, taken, sign in ((30, 30, 1), (30, 29, -1)):
        b = contract - 24
        got = hand_scores(ruleset, declarer=0, friends=friends, contract=contract, trump="H", taken=taken)
        want = tuple(sign * b * (declarer_times if s == 0 else 1 if s in friends else -1) for s in range(n))
        assert got == want and sum(got) == 0


def test_the_penalty_tally_charges_each_defender_or_the_declarer_and_each_friend() -> None:
    ruleset = make_rules("mighty-6")
    assert ruleset.score == "penalty"
    made = hand_scores(ruleset, declarer=0, friends=(1, 2), contract=28, trump="H", taken=28)
    assert made == (0, 0, 0, -4, -4, -4)
    failed = hand_scores(ruleset, declarer=0, friends=(1, 2), contract=28, trump="H", taken=27)
    assert failed == (-4, -4, -4, 0, 0, 0)


def test_pagat_doubles_for_a_run_a_back_run_no_trump_and_playing_alone() -> None:
    ruleset = make_rules("mighty-6", {"score": "pagat"})
    assert pagat_stake(ruleset, 30, "H", 32, alone=False) == 2 * 5 + 2
    assert pagat_stake(ruleset, 30, "H", 40, alone=False) == (2 * 5 + 10) * 2  # run
    assert pagat_stake(ruleset, 30, "H", 19, alone=False) == 11  # defenders took 21: no back run
    assert pagat_stake(ruleset, 30, "H", 18, alone=False) == 12 * 2  # back run
    assert pagat_stake(ruleset, 30, "NT", 18, alone=True) == 12 * 8
    got = hand_scores(ruleset, declarer=0, friends=(3,), contract=30, trump="H", taken=32)
    assert got == (36, -12, -12, 12, -12, -12)


def test_a_friend_holding_both_calls_is_charged_once() -> None:
    dealt = large_deal("mighty-6", "AD#1", "2D#1", "3D#1 KH#2 QS#1")
    state = playing(to_play(dealt, friend=("QS#1", "KH#2")))
    scores = hand_scores(state.rules, declarer=0, friends=state.friends, contract=25, trump="H", taken=0)
    assert scores == (-1, 0, -1, 0, 0, 0)


# ---------------------------------------------------------------- hand files


def test_a_two_pack_hand_file_prints_friends_once_every_call_is_revealed() -> None:
    dealt = large_deal("mighty-6", "AD#1", "2D#1", "3D#1", "4D#1", "5D#1", "6D#1")
    commands: list[dict[str, Any]] = [
        {"type": "bid", "seat": 0, "points": 25, "trump": "H"},
        *({"type": "pass", "seat": s} for s in range(1, 6)),
        {"type": "discard", "seat": 0, "cards": list(dealt.kitty)},
        {"type": "call_friend", "seat": 0, "friend": ["first_trick", dealt.hands[0][1]]},
    ]
    document = {"format": "mighty-hand/1", "rules": "mighty-6", "dealer": 0,
                "hands": [list(h) for h in dealt.hands], "kitty": list(dealt.kitty),
                "commands": commands}
    outcome = replay(*parse(msgspec.json.encode(document)))
    assert outcome.rejected is not None and outcome.rejected.code == "bad_friend_call"  # held
    commands[-1]["friend"] = ["first_trick", dealt.hands[3][5]]
    commands += [{"type": "play", "seat": s, "card": c} for s, c in enumerate(DIAMONDS)]
    outcome = replay(*parse(msgspec.json.encode(document)))
    assert outcome.rejected is None
    assert "friends" not in result_of(outcome.state) and "friend" not in result_of(outcome.state)
    state = outcome.state
    assert isinstance(state, Playing) and state.friends == (3,)


# ---------------------------------------------------------------- the table


def test_a_two_pack_table_plays_a_hand_and_the_lowest_friend_deals_next() -> None:
    players = [f"p{i}" for i in range(8)]
    state = initial_state("big")

    def send(command: Any, player: str | None) -> None:
        nonlocal state
        for event in table_decide(state, Submission(command, player)):
            state = table_evolve(state, event)

    send(CreateTable(variant="mighty-8"), players[0])
    for seat, player in enumerate(players):
        send(JoinSeat(seat=seat), player)
    send(StartTable(first_dealer=0), players[0])
    dealt = large_deal("mighty-8", "AD#1 KH#1", "2D#1", "3D#1 KH#2", "4D#1", "5D#1 QS#1", "6D#1")
    send(DealHand(order=(*(c for h in dealt.hands for c in h), *dealt.kitty), salt="s"), None)
    script: list[HandCommand] = [bid(0, "25 H"), *(pass_(s) for s in range(1, 8)),
                                 discard(0, " ".join(dealt.kitty)),
                                 CallFriend(seat=0, friend=("KH#2", "QS#1"))]
    for command in script:
        send(command, players[command.seat])
    while isinstance(state.hand, Playing):
        seat = state.hand.to_act
        send(legal_commands(state.hand, seat)[0], players[seat])
    assert isinstance(state.hand, Finished) and state.hand.friends == (2, 4)
    assert state.dealer == 2  # two friends: the lower friend seat deals next

"""Property tests over random hands (issue 2's acceptance).

A hand is a random deal (a permutation of the variant's deck), a random rule set and a
seed that picks among ``legal_commands`` until the hand ends. At every step the tests
check the decider against an oracle written from docs/rules/mighty.md alone (who may play what, who
wins a trick, what a hand scores) and every seat's view against §8; at the end they check
the conservation laws and that folding the events gives the same state.

``HYPOTHESIS_PROFILE=thorough`` plays thousands of hands; the default keeps the unit tier
fast.
"""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import event as note_event
from hypothesis import strategies as st

from domain.codec import decode_event, encode_event
from domain.errors import RuleError
from domain.mighty.commands import (
    Bid,
    CallFriend,
    ChangeTrump,
    ClaimMisdeal,
    Discard,
    HandCommand,
    Pass,
    Play,
)
from domain.mighty.commands import (
    Exchange as ExchangeCommand,
)
from domain.mighty.decider import deal_event, decide, evolve
from domain.mighty.events import (
    CardPlayed,
    FriendCalled,
    FriendRevealed,
    HandEvent,
    HandScored,
    TrickWon,
)
from domain.mighty.handfile import parse, replay, to_hand_file
from domain.mighty.legal import legal_commands
from domain.mighty.rules import OPTIONS, VARIANTS, RuleSet, make_rules
from domain.mighty.state import Bidding, Exchange, Finished, HandState, Playing, Redeal, to_act
from domain.mighty.views import audit_view, seat_view, spectator_view
from tests.unit.helpers import fold

settings.register_profile(
    "unit", max_examples=300, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough", max_examples=5000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "unit"))

# ---------------------------------------------------------------- docs/rules/mighty.md, read again

RANKS = "23456789TJQKA"
PLAYABLE = [name for name, spec in VARIANTS.items() if spec.playable and spec.packs == 1]
# A two-pack hand takes about ten times a mighty-5 hand to check: they get their own tests
# with fewer examples, so the unit tier stays fast (the thorough profile plays many more).
TWO_PACK_VARIANTS = [name for name, spec in VARIANTS.items() if spec.playable and spec.packs == 2]
TWO_PACK_EXAMPLES = 25 if os.environ.get("HYPOTHESIS_PROFILE", "unit") == "unit" else 1000
# §6/§7 "made" multipliers: declarer, friend, each defender; alone: declarer, each defender.
# The -short variants under fixed/pagat pay as the full variant with as many players.
PAYOUT = {"mighty-5": (2, 1, 1, 4, 1), "mighty-4": (4, 2, 3, 9, 3), "mighty-3": (2, 0, 1, 2, 1),
          "mighty-4-short": (4, 2, 3, 9, 3), "mighty-3-short": (2, 0, 1, 2, 1)}
OFFSET = {"mighty-5": 12, "mighty-4": 12, "mighty-3": 9, "mighty-4-short": 11, "mighty-3-short": 10,
          "mighty-6": 24, "mighty-7": 24, "mighty-8": 24}
MIN_BID = {"mighty-5": 13, "mighty-4": 13, "mighty-3": 10, "mighty-4-short": 12, "mighty-3-short": 11,
           "mighty-6": 25, "mighty-7": 25, "mighty-8": 25}
# docs/rules/mighty.md §10: two packs (cards AS#1, AS#2, jokers JK1..JK4), 40 points, two friends.
TWO_PACKS = {"mighty-6", "mighty-7", "mighty-8"}
TIE_RANK = {"S": 0, "C": 1, "D": 2, "H": 3, "NT": 4}
CARD = re.compile(rb'"(JK\d?|[2-9TJQKA][SHDC](?:#\d)?)"')


def suit(card: str) -> str | None:
    return None if card.startswith("JK") else card[1]


def rank(card: str) -> int:
    return RANKS.index(card[0])


def points(cards: Iterable[str]) -> int:
    return sum(1 for c in cards if c[0] in "AKQJT" and not c.startswith("JK"))


def joker(card: str) -> bool:
    return card.startswith("JK")


def copies(rules: RuleSet, card: str) -> set[str]:
    return {card + "#1", card + "#2"} if rules.variant in TWO_PACKS else {card}


def mighty(rules: RuleSet, trump: str) -> set[str]:
    return copies(rules, "AD" if trump == "S" else "AS")


def ripper(rules: RuleSet, trump: str) -> set[str]:
    return copies(rules, ("7" if rules.variant == "mighty-3-short" else "3") + ("S" if trump == "C" else "C"))


def total_points(rules: RuleSet) -> int:
    return 40 if rules.variant in TWO_PACKS else 20


def higher_bid(rules: RuleSet, standing: tuple[int, str] | None, pts: int, trump: str) -> bool:
    if standing is None:
        return True
    if pts != standing[0]:
        return pts > standing[0]
    if rules.suit_ranks_break_ties:
        return TIE_RANK[trump] > TIE_RANK[standing[1]]
    return trump == "NT" and standing[1] != "NT"


@dataclass
class Trick:
    """What the oracle tracks of the trick in progress, from the commands alone."""

    named: str | None = None  # led suit, or the suit named with a joker lead
    call: bool = False  # the lead was a Ripper joker call
    call_effective: bool = False  # ... and another seat held the Joker
    cards: list[str] = field(default_factory=list)


def expected_play_refusal(state: Playing, trick: Trick, card: str, rules: RuleSet) -> str | None:
    """The code docs/rules/mighty.md §5 refuses a held card with, or None when it may be played."""
    hand = state.hands[state.to_act]
    trump = state.trump
    restricted = [c for c in hand if joker(c) or c in ripper(rules, trump) or suit(c) == trump]
    if not trick.cards:
        if state.tricks or card not in restricted or len(restricted) == len(hand):
            return None
        return "illegal_first_lead"
    if card in mighty(rules, trump) or joker(card):
        return None
    if trick.call_effective and any(joker(c) for c in hand):
        return "must_play_joker"
    if suit(card) != trick.named and any(suit(c) == trick.named for c in hand):
        return "must_follow_suit"
    return None


def expected_winner(state: Playing, trick: Trick, cards: list[str]) -> int:
    n = state.players
    seats = {c: (state.leader + i) % n for i, c in enumerate(cards)}
    number = len(state.tricks)
    power = 0 < number < state.rules.spec.hand_size - 1 and not trick.call
    mighties = [c for c in cards if c in mighty(state.rules, state.trump)]
    if mighties:  # the first played of identical cards ranks higher
        return seats[mighties[0]]
    jokers = [c for c in cards if joker(c)]
    if power and jokers:
        return seats[jokers[0]]
    for wanted in (state.trump, trick.named):
        of_suit = [c for c in cards if suit(c) == wanted]
        if of_suit:
            return seats[max(of_suit, key=rank)]  # max keeps the first of equal ranks
    assert joker(cards[0])
    return state.leader


def expected_scores(rules: RuleSet, declarer: int, friend: int | None | set[int], contract: int,
                    trump: str, taken: int) -> tuple[int, ...]:
    friends = friend if isinstance(friend, set) else ({friend} - {None})
    n = rules.spec.players
    made = taken >= contract
    b = contract - OFFSET[rules.variant]
    if rules.score == "penalty":
        side = {declarer, *friends}
        return tuple(-b if (s in side) != made else 0 for s in range(n))
    stake = b
    total = total_points(rules)
    if rules.score == "pagat":
        stake = 2 * (contract - MIN_BID[rules.variant]) + (taken - contract) if made else contract - taken
        back_run = taken <= (9 if total == 20 else 18)
        for doubled in (taken == total, back_run, trump == "NT", not friends):
            stake *= 2 if doubled else 1
    sign = 1 if made else -1
    if rules.variant in TWO_PACKS:  # docs/rules/mighty.md §10.6's table: d - k, +1 each friend, -1 each
        k = len(friends)
        d = n - 1 - k
        return tuple(sign * stake * (d - k if s == declarer else 1 if s in friends else -1)
                     for s in range(n))
    assert isinstance(friend, int | None)
    dec, fr, dfd, alone_dec, alone_dfd = PAYOUT[rules.variant]
    out = []
    for s in range(n):
        if s == declarer:
            out.append(sign * stake * (alone_dec if friend is None else dec))
        elif s == friend:
            out.append(sign * stake * fr)
        else:
            out.append(-sign * stake * (alone_dfd if friend is None else dfd))
    return tuple(out)


# ---------------------------------------------------------------- random hands


@st.composite
def rule_sets(draw: st.DrawFn, variants: list[str] = PLAYABLE) -> RuleSet:
    variant = draw(st.sampled_from(variants))
    options = {name: draw(st.sampled_from(values)) for name, values in OPTIONS.items()}
    return make_rules(variant, options)


@st.composite
def deals(draw: st.DrawFn, variants: list[str] = PLAYABLE) -> tuple[RuleSet, list[str], int, int]:
    rules = draw(rule_sets(variants))
    deck = draw(st.permutations(rules.spec.deck))
    dealer = draw(st.integers(0, rules.spec.players - 1))
    seed = draw(st.integers(0, 2**32 - 1))
    return rules, list(deck), dealer, seed


def dealt(rules: RuleSet, deck: list[str], dealer: int) -> HandEvent:
    size, n = rules.spec.hand_size, rules.spec.players
    hands = tuple(tuple(deck[i * size:(i + 1) * size]) for i in range(n))
    return deal_event(rules, dealer=dealer, hands=hands, kitty=tuple(deck[n * size:]))


@dataclass(frozen=True)
class Style:
    """How a random hand is played. Played uniformly the Joker, always legal, rarely
    survives to the last trick; a hoarding player keeps it (and the Ripper) back."""

    pass_rate: float
    hoard_joker: bool


def hoarded(command: HandCommand) -> bool:
    if isinstance(command, Discard):
        return any(joker(c) for c in command.cards)
    return isinstance(command, Play) and (joker(command.card) or command.joker_call is not None
                                          or command.card[:2] in ("3C", "3S", "7C", "7S"))


def choose(rng: random.Random, state: HandState, style: Style) -> HandCommand:
    """A random legal command: a kind first (pass, bid, call...), then one of that kind."""
    seat = to_act(state)
    assert seat is not None
    if isinstance(state, Bidding) and rng.random() < 0.05:
        claims = [c for s in range(state.players) for c in legal_commands(state, s)
                  if isinstance(c, ClaimMisdeal)]
        if claims:
            return rng.choice(claims)
    commands = [c for c in legal_commands(state, seat) if not isinstance(c, ClaimMisdeal)]
    assert commands, f"seat {seat} to act has no legal command"
    if isinstance(state, Bidding) and rng.random() < style.pass_rate:
        return Pass(seat=seat)
    if style.hoard_joker:
        commands = [c for c in commands if not hoarded(c)] or commands
    kinds: dict[object, list[HandCommand]] = {}
    for command in commands:
        kind: object = type(command)
        if isinstance(command, CallFriend):
            kind = (command.friend if command.friend in ("first_trick", "none")
                    else "card" if isinstance(command.friend, str) else "two calls")
        kinds.setdefault(kind, []).append(command)
    if isinstance(state, Bidding) and len(kinds) > 1:
        kinds.pop(Pass, None)
    return rng.choice(kinds[rng.choice(list(kinds))])


@dataclass
class Played:
    """A hand played to its end, and what the checks saw on the way."""

    rules: RuleSet
    events: list[HandEvent]
    commands: list[HandCommand]
    state: HandState
    steps: int = 0


def refused_with(state: HandState, command: HandCommand) -> str | None:
    try:
        decide(state, command)
    except RuleError as error:
        assert error.message
        return error.code
    return None


Check = Callable[[HandState, "Trick", random.Random], None]


def play_hand(rules: RuleSet, deck: list[str], dealer: int, seed: int, *, check: Check) -> Played:
    rng = random.Random(seed)
    style = Style(pass_rate=rng.choice([0.4, 0.7, 0.95]), hoard_joker=rng.random() < 0.5)
    first = dealt(rules, deck, dealer)
    state: HandState = evolve(None, first)
    played = Played(rules, [first], [], state)
    trick = Trick()
    while not isinstance(state, Finished | Redeal):
        check(state, trick, rng)
        command = choose(rng, state, style)
        new = decide(state, command)
        if isinstance(state, Playing):
            trick = follow_trick(state, trick, command, new)
        for event in new:
            state = evolve(state, event)
        played.events.extend(new)
        played.commands.append(command)
        played.steps += 1
    check(state, trick, rng)
    played.state = state
    return played


def follow_trick(state: Playing, trick: Trick, command: HandCommand, new: list[HandEvent]) -> Trick:
    """Track the trick from the commands; check the winner against the oracle."""
    assert isinstance(command, Play)
    card = command.card
    if not trick.cards:
        rules = state.rules
        call = (bool(state.tricks) and card in ripper(rules, state.trump)
                and (rules.joker_call == "on_ripper_lead" or bool(command.joker_call)))
        others = [c for s, h in enumerate(state.hands) if s != command.seat for c in h]
        trick = Trick(named=command.suit if joker(card) else suit(card), call=call,
                      call_effective=call and any(joker(c) for c in others))
    trick.cards.append(card)
    won = [e for e in new if isinstance(e, TrickWon)]
    if len(trick.cards) < state.players:
        assert not won
        return trick
    assert len(won) == 1 and list(won[0].cards) == trick.cards
    assert won[0].winner == expected_winner(state, trick, trick.cards)
    assert won[0].points == points(trick.cards)
    return Trick()


# ---------------------------------------------------------------- checks at each step


def check_legal_commands_are_accepted(state: HandState, trick: Trick, rng: random.Random) -> None:
    for seat in range(state.players):
        commands = legal_commands(state, seat)
        if len(commands) > 1000:  # mighty-3's discards: 10 kitty choices x 969 card sets
            commands = rng.sample(commands, 500)
        for command in commands:
            assert refused_with(state, command) is None, command
        if seat != to_act(state):
            assert all(isinstance(c, ClaimMisdeal) for c in legal_commands(state, seat))


def check_refusals(state: HandState, trick: Trick, rng: random.Random) -> None:
    """Commands of known illegal kinds are refused with the code docs/rules/mighty.md gives."""
    n = state.players
    two_packs = state.rules.variant in TWO_PACKS
    assert refused_with(state, Pass(seat=n)) == "malformed_command"
    assert refused_with(state, Play(seat=0, card="ZZ")) == "malformed_command"
    ace = "AS#1" if two_packs else "AS"
    if two_packs:  # docs/hand-files.md, "Six to eight players": a one-pack name is no card here
        assert refused_with(state, Play(seat=to_act(state) or 0, card="AS")) == "malformed_command"
        assert refused_with(state, Play(seat=to_act(state) or 0, card="JK")) == "malformed_command"
    if isinstance(state, Finished | Redeal):
        assert refused_with(state, Pass(seat=0)) == "wrong_phase"
        assert refused_with(state, Play(seat=0, card=ace)) == "wrong_phase"
        return
    if not isinstance(state, Playing):
        assert refused_with(state, Play(seat=to_act(state) or 0, card=ace)) == "wrong_phase"
    if isinstance(state, Bidding):
        check_bidding_refusals(state, rng)
    elif isinstance(state, Exchange):
        check_exchange_refusals(state, rng)
    else:
        check_play_refusals(state, trick, rng)


def check_bidding_refusals(state: Bidding, rng: random.Random) -> None:
    rules, spec = state.rules, state.rules.spec
    standing = state.standing[1:] if state.standing else None
    for seat in {state.to_act, rng.randrange(state.players)}:
        passed = rules.pass_is_final and state.passed[seat]
        for pts in (spec.min_bid - 1, spec.min_bid, rng.randint(spec.min_bid, spec.max_bid),
                    spec.max_bid, spec.max_bid + 1):
            for trump in ("S", "H", "D", "C", "NT"):
                if passed:
                    want = "already_passed"
                elif seat != state.to_act:
                    want = "not_your_turn"
                elif not spec.min_bid <= pts <= spec.max_bid:
                    want = "bid_out_of_range"
                elif not higher_bid(rules, standing, pts, trump):
                    want = "bid_too_low"
                else:
                    want = None
                assert refused_with(state, Bid(seat=seat, points=pts, trump=trump)) == want
    assert refused_with(state, Discard(seat=state.to_act, cards=())) == "wrong_phase"


def check_exchange_refusals(state: Exchange, rng: random.Random) -> None:
    d = state.declarer
    other = (d + 1 + rng.randrange(state.players - 1)) % state.players
    hand = state.hands[d]
    spec = state.rules.spec
    k = spec.discard_count
    assert refused_with(state, Bid(seat=d, points=20, trump="NT")) == "wrong_phase"
    if spec.kitty_keep is None:
        exchange = ExchangeCommand(seat=other, take=hand[0], discard=hand[0])
        assert refused_with(state, exchange) == "wrong_phase"
    elif state.discards is None:
        check_kitty_keep_refusals(state, other)
        return
    elif state.exchanger is not None:
        check_kitty_exchange_refusals(state)
        return
    if state.discards is None:
        assert refused_with(state, Discard(seat=other, cards=hand[:k])) == "not_your_turn"
        assert refused_with(state, Discard(seat=d, cards=hand[:k - 1])) == "bad_discard"
        assert refused_with(state, Discard(seat=d, cards=(hand[0],) * k)) == "bad_discard"
        foreign = state.hands[other][0]
        assert refused_with(state, Discard(seat=d, cards=(*hand[:k - 1], foreign))) == "bad_discard"
        assert refused_with(state, ChangeTrump(seat=d, trump="NT")) == "wrong_phase"
        assert refused_with(state, CallFriend(seat=d, friend="none")) == "wrong_phase"
        return
    assert refused_with(state, Discard(seat=d, cards=hand[:k])) == "wrong_phase"
    if not state.trump_changed:
        assert refused_with(state, ChangeTrump(seat=d, trump=state.trump)) == "bad_trump_change"
    else:
        assert refused_with(state, ChangeTrump(seat=d, trump="S")) == "bad_trump_change"
    if state.rules.spec.max_friends:
        assert refused_with(state, CallFriend(seat=d, friend=rng.choice(hand))) == "bad_friend_call"
        assert refused_with(state, CallFriend(seat=d, friend=state.discards[0])) == "bad_friend_call"
    assert refused_with(state, CallFriend(seat=other, friend="none")) == "not_your_turn"


def check_kitty_keep_refusals(state: Exchange, other: int) -> None:
    """mighty-3 (§7): the declarer names the kitty cards it keeps in ``take``."""
    d, keep = state.declarer, state.rules.spec.kitty_keep
    assert keep is not None
    hand, kitty = state.hands[d], state.kitty_left
    assert refused_with(state, Discard(seat=d, cards=hand[:keep])) == "bad_discard"  # no take
    foreign = state.hands[other][0]
    bad_take = (*kitty[:keep - 1], foreign)
    assert refused_with(state, Discard(seat=d, cards=hand[:keep], take=bad_take)) == "bad_discard"
    assert refused_with(state, Discard(seat=d, cards=hand[:keep], take=kitty[:keep])) is None
    assert refused_with(state, Discard(seat=other, cards=hand[:keep], take=kitty[:keep])) == "not_your_turn"
    exchange = ExchangeCommand(seat=other, take=kitty[0], discard=state.hands[other][0])
    assert refused_with(state, exchange) == "not_your_turn"


def check_kitty_exchange_refusals(state: Exchange) -> None:
    """mighty-3: each other player in turn takes a kitty card left and discards one."""
    seat, d = state.exchanger, state.declarer
    assert seat is not None
    hand, left = state.hands[seat], state.kitty_left
    idle = next(s for s in range(state.players) if s not in (seat, d))
    assert refused_with(state, ExchangeCommand(seat=seat, take=left[0], discard=left[0])) is None
    assert refused_with(state, ExchangeCommand(seat=seat, take=left[0], discard=hand[0])) is None
    assert refused_with(state, ExchangeCommand(seat=idle, take=left[0], discard=state.hands[idle][0])) == "not_your_turn"
    assert refused_with(state, ExchangeCommand(seat=seat, take=hand[0], discard=hand[1])) == "bad_discard"
    foreign = state.hands[d][0]
    assert refused_with(state, ExchangeCommand(seat=seat, take=left[0], discard=foreign)) == "bad_discard"
    assert refused_with(state, ChangeTrump(seat=d, trump="NT" if state.trump != "NT" else "S")) == "not_your_turn"
    assert refused_with(state, CallFriend(seat=d, friend="none")) == "not_your_turn"


def check_play_refusals(state: Playing, trick: Trick, rng: random.Random) -> None:
    seat = state.to_act
    hand = state.hands[seat]
    for card in hand:
        want = expected_play_refusal(state, trick, card, state.rules)
        command = Play(seat=seat, card=card, suit=rng.choice("SHDC"), joker_call=rng.random() < 0.5)
        assert refused_with(state, command) == want, (card, trick)
    legal = {p.card for p in legal_commands(state, seat)}  # type: ignore[union-attr]
    assert legal == {c for c in hand if expected_play_refusal(state, trick, c, state.rules) is None}
    other = (seat + 1 + rng.randrange(state.players - 1)) % state.players
    if state.hands[other]:
        foreign = rng.choice(state.hands[other])
        assert refused_with(state, Play(seat=seat, card=foreign)) == "card_not_in_hand"
        assert refused_with(state, Play(seat=other, card=foreign)) == "not_your_turn"
    held_jokers = [c for c in hand if joker(c)]
    if not trick.cards and held_jokers:
        assert refused_with(state, Play(seat=seat, card=held_jokers[0])) == "joker_suit_required"
    assert refused_with(state, Pass(seat=seat)) == "wrong_phase"


def check_views(state: HandState, trick: Trick, rng: random.Random) -> None:
    """§8: no seat sees another's unplayed card, the discards (but the declarer), or the
    friend before the reveal; a spectator sees no unplayed card at all."""
    n = state.players
    contracted = not isinstance(state, Bidding | Redeal)
    discards = set(getattr(state, "discards", None) or ())
    exempt: set[str] = set()
    if contracted and state.kitty_shown:  # type: ignore[union-attr]
        exempt |= set(state.kitty)
    if isinstance(state, Playing | Finished):
        exempt |= {c for c in state.calls if c != "first_trick"}
    hidden_kitty = set() if contracted else set(state.kitty)
    exchanges = getattr(state, "exchanges", ())
    for viewer in [*range(n), None]:
        view = seat_view(state, viewer) if viewer is not None else spectator_view(state)
        seen = cards_in(view)
        others = {c for s, h in enumerate(state.hands) if s != viewer for c in h}
        forbidden = others | hidden_kitty
        if not (contracted and viewer == state.declarer):  # type: ignore[union-attr]
            forbidden |= discards
        forbidden |= {discard for s, _, discard in exchanges if s != viewer}
        saw_kitty = set()  # mighty-3: the declarer and each taker saw the kitty they chose from
        if contracted and viewer is not None and (
                viewer in (state.declarer, getattr(state, "exchanger", None))  # type: ignore[union-attr]
                or any(s == viewer for s, _, _ in exchanges)):
            saw_kitty = set(state.kitty)
        leaked = (seen & forbidden) - exempt - saw_kitty
        assert not leaked, f"viewer {viewer} sees {sorted(leaked)}"
        if (isinstance(state, Playing | Finished) and not state.friend_known
                and (viewer is None or viewer not in {state.friend, *state.friends})):
            assert view.friend is None
        if isinstance(state, Playing) and not state.friend_known:
            # only revealed friends are shown: a called card played, or trick 1 over
            assert set(view.friends or ()) <= set(revealed_friends(state))
    if isinstance(state, Finished | Redeal):
        assert audit_view(state).dealt == state.dealt
    else:
        with pytest.raises(ValueError):
            audit_view(state)


def revealed_friends(state: Playing) -> list[int]:
    """The friends public so far, from the tricks alone (docs/rules/mighty.md §10.4, item 5)."""
    seats = []
    played = [(t.leader + i) % state.players for t in state.tricks for i in range(len(t.cards))]
    cards = [c for t in state.tricks for c in t.cards]
    played += [(state.leader + i) % state.players for i in range(len(state.trick))]
    cards += list(state.trick)
    for call in state.calls:
        if call == "first_trick" and state.tricks and state.tricks[0].winner != state.declarer:
            seats.append(state.tricks[0].winner)
        elif call in cards:
            seats.append(played[cards.index(call)])
    return seats


def cards_in(view: object) -> set[str]:
    """Every card string in the encoded view, the friend-call choices of ``legal`` aside:
    those list every card the declarer does not hold, which tells nothing."""
    data = msgspec.to_builtins(view)
    data["legal"] = [c for c in data.get("legal", ()) if c.get("type") != "call_friend"]
    return {m.decode() for m in CARD.findall(msgspec.json.encode(data))}


# ---------------------------------------------------------------- the end of a hand


def check_finished(played: Played) -> None:
    state, rules = played.state, played.rules
    spec = rules.spec
    assert state == fold(played.events)
    assert state == fold(decode_event(encode_event(e)) for e in played.events)  # type: ignore[misc]
    if isinstance(state, Redeal):
        assert state.reason in ("passed_out", "misdeal")
        return
    assert isinstance(state, Finished)
    tricks = state.tricks
    assert len(tricks) == spec.hand_size and all(len(t.cards) == spec.players for t in tricks)
    assert all(not hand for hand in state.hands)
    exchanged = [discard for _, _, discard in state.exchanges]  # mighty-3 (§7)
    played_cards = [c for t in tricks for c in t.cards] + list(state.discards) + exchanged
    assert Counter(played_cards) == Counter(spec.deck), "every card is played once"
    total = total_points(rules)
    assert sum(t.points for t in tricks) + points(state.discards) + points(exchanged) == total, "all points"
    scored = state.scored
    if rules.variant in TWO_PACKS:
        check_two_pack_friends(played)
        return
    friend = expected_friend(state)
    assert scored.friend == friend
    side = {state.declarer, friend}
    taken = sum(t.points for t in tricks if t.winner in side) + points(state.discards)
    assert scored.declarer_side_points == taken
    assert scored.made == (taken >= state.points)
    assert scored.scores == expected_scores(rules, state.declarer, friend, state.points,
                                            state.trump, taken)
    if rules.score in ("fixed", "pagat"):
        assert sum(scored.scores) == 0
    reveals = [e for e in played.events if isinstance(e, FriendRevealed)]
    assert [e.seat for e in reveals] == ([friend] if friend is not None and state.call != "none" else [])
    if state.call == "card":
        plays = [e for e in played.events if isinstance(e, CardPlayed | FriendRevealed)]
        at = next(i for i, e in enumerate(plays) if isinstance(e, CardPlayed) and e.card == state.called_card)
        assert plays[at + 1] == FriendRevealed(seat=friend, call=state.called_card)  # type: ignore[arg-type]
        called = [e for e in played.events if isinstance(e, FriendCalled)]
        assert [e.holder for e in called] == [friend]  # the event names the secret friend
    assert [e for e in played.events if isinstance(e, HandScored)] == [scored]


def check_two_pack_friends(played: Played) -> None:
    """docs/rules/mighty.md §10.4, §10.6: the friends are the distinct seats the calls name."""
    state, rules = played.state, played.rules
    assert isinstance(state, Finished)
    friends: set[int] = set()
    for call in state.calls:
        if call == "first_trick":
            if state.tricks[0].winner != state.declarer:
                friends.add(state.tricks[0].winner)
        else:
            friends.add(next(s for s, h in enumerate(state.dealt) if call in h))
    assert state.declarer not in friends and len(friends) <= 2
    assert state.friends == tuple(sorted(friends)) and state.scored.friend is None
    side = {state.declarer, *friends}
    taken = sum(t.points for t in state.tricks if t.winner in side) + points(state.discards)
    scored = state.scored
    assert scored.declarer_side_points == taken and scored.made == (taken >= state.points)
    assert scored.scores == expected_scores(rules, state.declarer, friends, state.points,
                                            state.trump, taken)
    if rules.score in ("fixed", "pagat"):
        assert sum(scored.scores) == 0
    reveals = {e.seat for e in played.events if isinstance(e, FriendRevealed)}
    assert reveals == friends
    assert [e for e in played.events if isinstance(e, HandScored)] == [scored]


def expected_friend(state: Finished) -> int | None:
    if state.call == "card":
        return next(s for s, h in enumerate(state.dealt) if state.called_card in h)
    if state.call == "first_trick":
        winner = state.tricks[0].winner
        return None if winner == state.declarer else winner
    return None


def check_hand_file_round_trip(played: Played) -> None:
    """The hand exported as a hand file replays to the same events."""
    first = played.events[0]
    document = to_hand_file(played.rules, first, [msgspec.to_builtins(c) for c in played.commands])
    hand_file, rules = parse(msgspec.json.encode(document))
    outcome = replay(hand_file, rules)
    assert outcome.rejected is None and outcome.events == played.events


# ---------------------------------------------------------------- the properties


def every_step(*checks: Check) -> Check:
    def check(state: HandState, trick: Trick, rng: random.Random) -> None:
        for one in checks:
            one(state, trick, rng)
    return check


@PROFILE
@given(deals())
def test_random_hands_keep_every_rule_and_invariant(deal: tuple[RuleSet, list[str], int, int]) -> None:
    rules, deck, dealer, seed = deal
    played = play_hand(rules, deck, dealer, seed, check=every_step(
        check_legal_commands_are_accepted, check_refusals))
    check_finished(played)
    check_hand_file_round_trip(played)
    note_event(f"{rules.variant}: {type(played.state).__name__}")


@PROFILE
@given(deals())
def test_no_view_ever_shows_what_its_viewer_may_not_see(deal: tuple[RuleSet, list[str], int, int]) -> None:
    rules, deck, dealer, seed = deal
    play_hand(rules, deck, dealer, seed, check=check_views)


def test_the_oracle_itself_reads_the_rules_on_a_known_trick() -> None:
    state = fold([dealt(make_rules(), list(VARIANTS["mighty-5"].deck), 0)])
    assert isinstance(state, Bidding)
    assert expected_scores(make_rules("mighty-5", {"score": "pagat"}), 0, 1, 17, "H", 20) == (44, 22, -22, -22, -22)
    assert expected_scores(make_rules("mighty-5", {"score": "pagat"}), 0, 1, 16, "NT", 18)[1] == 16



TWO_PACK_PROFILE = settings(PROFILE, max_examples=TWO_PACK_EXAMPLES)


@TWO_PACK_PROFILE
@given(deals(TWO_PACK_VARIANTS))
def test_random_two_pack_hands_keep_every_rule_and_invariant(deal: tuple[RuleSet, list[str], int, int]) -> None:
    """mighty-6/7/8 (docs/rules/mighty.md §10) through the same oracle and invariants."""
    rules, deck, dealer, seed = deal
    played = play_hand(rules, deck, dealer, seed, check=every_step(
        check_legal_commands_are_accepted, check_refusals))
    check_finished(played)
    check_hand_file_round_trip(played)
    note_event(f"{rules.variant}: {type(played.state).__name__}")


@TWO_PACK_PROFILE
@given(deals(TWO_PACK_VARIANTS))
def test_no_two_pack_view_ever_shows_what_its_viewer_may_not_see(deal: tuple[RuleSet, list[str], int, int]) -> None:
    rules, deck, dealer, seed = deal
    play_hand(rules, deck, dealer, seed, check=check_views)

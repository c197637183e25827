"""Given/when/then for the hand decider, and deals written out card by card.

A rule test reads as: the events so far (``given``), one command (``when``), and either
the events it causes (``then``) or the stable code it is refused with (``refused``).
Deals are explicit card lists, never random, so each test shows the cards it is about.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

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
from domain.mighty.decider import deal_event, decide, evolve
from domain.mighty.events import HandDealt, HandEvent
from domain.mighty.rules import RuleSet, make_rules
from domain.mighty.state import HandState, to_act

# ---------------------------------------------------------------- deals


def cards(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def rules(variant: str = "mighty-5", **options: Any) -> RuleSet:
    return make_rules(variant, options)


def deal(*hands: str, kitty: str, dealer: int = 0, ruleset: RuleSet | None = None,
         first_bidder: int | None = None, hand_no: int = 0) -> HandDealt:
    """A ``HandDealt`` from one string per seat; the cards must be the variant's deck."""
    ruleset = ruleset or rules()
    dealt = tuple(cards(h) for h in hands)
    rest = cards(kitty)
    spec = ruleset.spec
    assert Counter(c for h in dealt for c in h) + Counter(rest) == Counter(spec.deck), "not the deck"
    assert all(len(h) == spec.hand_size for h in dealt), [len(h) for h in dealt]
    return deal_event(ruleset, dealer=dealer, hands=dealt, kitty=rest,
                      first_bidder=first_bidder, hand_no=hand_no)


# The deal most rule tests start from (mighty-5, seat 0 deals and bids first). Each seat
# is long in a suit or two, so who follows what is easy to see.
STANDARD_HANDS = (
    "AS KS QS JS TS AH KH AD KD AC",
    "9S 8S 7S QH JH TH QD JD KC QC",
    "6S 5S 4S 9H 8H 7H TD 9D JC TC",
    "3S 2S 6H 5H 4H 8D 7D 6D 9C 8C",
    "JK 3H 2H 5D 4D 3D 2D 7C 6C 5C",
)
STANDARD_KITTY = "4C 3C 2C"


def standard_deal(ruleset: RuleSet | None = None, dealer: int = 0) -> HandDealt:
    return deal(*STANDARD_HANDS, kitty=STANDARD_KITTY, ruleset=ruleset, dealer=dealer)


# ---------------------------------------------------------------- commands


def bid(seat: int, text: str) -> Bid:
    points, trump = text.split()
    return Bid(seat=seat, points=int(points), trump=trump)


def pass_(seat: int) -> Pass:
    return Pass(seat=seat)


def claim_misdeal(seat: int) -> ClaimMisdeal:
    return ClaimMisdeal(seat=seat)


def discard(seat: int, text: str) -> Discard:
    return Discard(seat=seat, cards=cards(text))


def change_trump(seat: int, trump: str) -> ChangeTrump:
    return ChangeTrump(seat=seat, trump=trump)


def call(seat: int, friend: str, lead_suit: str | None = None) -> CallFriend:
    return CallFriend(seat=seat, friend=friend, lead_suit=lead_suit)


def play(seat: int, card: str, suit: str | None = None, joker_call: bool | None = None) -> Play:
    return Play(seat=seat, card=card, suit=suit, joker_call=joker_call)


def play_token(seat: int, token: str) -> Play:
    """``KH``; ``JK/S`` leads the joker naming spades; ``3C!`` / ``3C?`` declare a joker
    call or not (option ``joker_call = declared``)."""
    if "/" in token:
        card, suit = token.split("/")
        return play(seat, card, suit=suit)
    if token[-1] in "!?":
        return play(seat, token[:-1], joker_call=token[-1] == "!")
    return play(seat, token)


# ---------------------------------------------------------------- given / when / then


def fold(events: Iterable[HandEvent]) -> HandState:
    state: HandState | None = None
    for event in events:
        state = evolve(state, event)
    assert state is not None
    return state


def run(events: Iterable[HandEvent], *commands: HandCommand) -> list[HandEvent]:
    """The events so far plus what each command adds; a refusal fails the test."""
    history = list(events)
    state = fold(history)
    for command in commands:
        new = decide(state, command)
        for event in new:
            state = evolve(state, event)
        history.extend(new)
    return history


def play_cards(events: Iterable[HandEvent], *tricks: str) -> list[HandEvent]:
    """Play cards in order, each by the seat whose turn it is."""
    history = list(events)
    state = fold(history)
    for token in " ".join(tricks).split():
        seat = to_act(state)
        assert seat is not None, f"nobody is to act before {token}"
        new = decide(state, play_token(seat, token))
        for event in new:
            state = evolve(state, event)
        history.extend(new)
    return history


def auction_to(dealt: HandDealt, seat: int, contract: str) -> list[HandEvent]:
    """Everyone passes but ``seat``, who bids ``contract`` in turn: the auction is won."""
    n = len(dealt.hands)
    commands: list[HandCommand] = []
    for step in range(n):
        bidder = (dealt.first_bidder + step) % n
        commands.append(bid(bidder, contract) if bidder == seat else pass_(bidder))
    return run([dealt], *commands)


def ready_to_play(dealt: HandDealt, *, declarer: int = 0, contract: str = "13 H",
                  discards: str, friend: str = "none", trump: str | None = None,
                  lead_suit: str | None = None) -> list[HandEvent]:
    """Auction, discard, an optional trump change and the friend call: play starts."""
    events = auction_to(dealt, declarer, contract)
    commands: list[HandCommand] = [discard(declarer, discards)]
    if trump is not None:
        commands.append(change_trump(declarer, trump))
    commands.append(call(declarer, friend, lead_suit))
    return run(events, *commands)


class When:
    def __init__(self, events: list[HandEvent], command: HandCommand) -> None:
        self.events = events
        self.command = command

    def then(self, *expected: HandEvent) -> list[HandEvent]:
        got = decide(fold(self.events), self.command)
        assert got == list(expected)
        return got

    def then_includes(self, *expected: HandEvent) -> list[HandEvent]:
        got = decide(fold(self.events), self.command)
        for event in expected:
            assert event in got, f"{event} not in {got}"
        return got

    def refused(self, code: str) -> RuleError:
        state = fold(self.events)
        try:
            decide(state, self.command)
        except RuleError as error:
            assert error.code == code, f"refused with {error.code}: {error.message}"
            assert error.message
            return error
        raise AssertionError(f"{self.command} was accepted; expected {code}")

    def accepted(self) -> list[HandEvent]:
        return decide(fold(self.events), self.command)


class Given:
    def __init__(self, events: Iterable[HandEvent]) -> None:
        self.events = list(events)

    def when(self, command: HandCommand) -> When:
        return When(self.events, command)

    @property
    def state(self) -> HandState:
        return fold(self.events)


def given(*events: HandEvent | Iterable[HandEvent]) -> Given:
    flat: list[HandEvent] = []
    for item in events:
        if isinstance(item, list | tuple):
            flat.extend(item)
        else:
            flat.append(item)  # type: ignore[arg-type]
    return Given(flat)

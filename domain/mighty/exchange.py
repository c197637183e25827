"""Kitty, discards, trump change and the friend call (docs/rules/mighty.md §4)."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from domain.errors import BadDiscard, BadFriendCall, BadTrumpChange, NotYourTurn, WrongPhase
from domain.mighty.commands import CallFriend, ChangeTrump, Discard
from domain.mighty.commands import Exchange as ExchangeCommand
from domain.mighty.events import (
    CardsDiscarded,
    FriendCalled,
    HandEvent,
    KittyExchanged,
    TrumpChanged,
)
from domain.mighty.state import Exchange

FRIEND_CALLS = ("first_trick", "none")


def _check_declarer(state: Exchange, seat: int, what: str) -> None:
    if seat != state.declarer:
        raise NotYourTurn(f"Only the declarer, seat {state.declarer}, may {what}.")


def _check_discarded(state: Exchange, what: str) -> tuple[str, ...]:
    if state.discards is None:
        raise WrongPhase(f"The declarer discards before they may {what}.")
    return state.discards


def _check_exchanges_done(state: Exchange, what: str) -> None:
    """mighty-3: the declarer may change trump or call only after every exchange."""
    if state.exchanger is not None:
        raise NotYourTurn(f"Seat {state.exchanger} takes a kitty card before the declarer may {what}.")


def decide_discard(state: Exchange, cmd: Discard) -> list[HandEvent]:
    if state.discards is not None:
        raise WrongPhase("The declarer has already discarded.")
    _check_declarer(state, cmd.seat, "discard")
    want = state.rules.spec.discard_count
    hand = state.hands[cmd.seat]
    taken = _kept_kitty_cards(state, cmd) if state.rules.spec.kitty_keep is not None else None
    hand += taken or ()
    if len(cmd.cards) != want:
        raise BadDiscard(f"The declarer discards exactly {want} cards, not {len(cmd.cards)}.")
    twice = [c for c, k in Counter(cmd.cards).items() if k > 1]
    if twice:
        raise BadDiscard(f"{twice[0]} is discarded twice.")
    missing = [c for c in cmd.cards if c not in hand]
    if missing:
        raise BadDiscard(f"The declarer does not hold {missing[0]}.")
    return [CardsDiscarded(seat=cmd.seat, cards=tuple(cmd.cards), taken=taken)]


def _kept_kitty_cards(state: Exchange, cmd: Discard) -> tuple[str, ...]:
    """mighty-3 (§7): the declarer names in ``take`` the kitty cards it keeps."""
    keep = state.rules.spec.kitty_keep
    take = cmd.take or ()
    if len(take) != keep or len(set(take)) != keep:
        raise BadDiscard(f"The declarer keeps {keep} different kitty cards, named in `take`.")
    stray = [c for c in take if c not in state.kitty_left]
    if stray:
        raise BadDiscard(f"{stray[0]} is not a kitty card.")
    return tuple(take)


def decide_exchange(state: Exchange, cmd: ExchangeCommand) -> list[HandEvent]:
    """mighty-3 (§7): clockwise from the declarer's left, each other player takes one of
    the kitty cards left and discards any one card (the one just taken included)."""
    if state.discards is None or state.exchanger is None or cmd.seat != state.exchanger:
        turn = state.exchanger if state.exchanger is not None else state.declarer
        raise NotYourTurn(f"It is seat {turn}'s turn in the kitty exchange, not seat {cmd.seat}'s.")
    if cmd.take not in state.kitty_left:
        raise BadDiscard(f"{cmd.take} is not one of the kitty cards left.")
    if cmd.discard not in state.hands[cmd.seat] and cmd.discard != cmd.take:
        raise BadDiscard(f"Seat {cmd.seat} does not hold {cmd.discard}.")
    return [KittyExchanged(seat=cmd.seat, take=cmd.take, discard=cmd.discard)]


def raised_contract(points: int, old: str, new: str) -> int:
    """§4.2: +2 to another suit or from NT to a suit; +1 from a suit to NT."""
    return points + (1 if new == "NT" else 2)


def decide_change_trump(state: Exchange, cmd: ChangeTrump) -> list[HandEvent]:
    _check_discarded(state, "change trump")
    _check_exchanges_done(state, "change trump")
    _check_declarer(state, cmd.seat, "change trump")
    if state.trump_changed:
        raise BadTrumpChange("Trump may be changed once only.")
    if cmd.trump == state.trump:
        raise BadTrumpChange(f"Trump is already {cmd.trump}; a change must name another.")
    points = raised_contract(state.points, state.trump, cmd.trump)
    limit = state.rules.spec.max_bid
    if points > limit:
        raise BadTrumpChange(
            f"Changing trump to {cmd.trump} would raise the contract to {points}, past {limit}."
        )
    return [TrumpChanged(seat=cmd.seat, trump=cmd.trump, points=points)]


def decide_call_friend(state: Exchange, cmd: CallFriend) -> list[HandEvent]:
    discards = _check_discarded(state, "call a friend")
    _check_exchanges_done(state, "call a friend")
    _check_declarer(state, cmd.seat, "call a friend")
    friend = cmd.friend
    rules = state.rules
    if not isinstance(friend, str):
        if rules.spec.max_friends < 2:
            raise BadFriendCall("This variant calls one friend; a list of calls is not allowed.")
        return _two_calls(state, cmd, friend, discards)
    if rules.spec.max_friends == 0 and friend != "none":
        raise BadFriendCall("In this variant the declarer plays alone; the only call is none.")
    if friend == "first_trick" and not rules.first_trick_friend_allowed:
        raise BadFriendCall("This table's rules do not allow a first-trick friend.")
    _check_lead_advice(state, cmd.lead_suit)
    if friend in FRIEND_CALLS:
        return [FriendCalled(seat=cmd.seat, call=friend, lead_suit=cmd.lead_suit)]
    _check_called_card(state, friend, discards)
    return [FriendCalled(seat=cmd.seat, call="card", card=friend, lead_suit=cmd.lead_suit,
                         holder=holder_of(state.hands, friend))]


def _two_calls(
    state: Exchange, cmd: CallFriend, calls: tuple[str, ...], discards: tuple[str, ...]
) -> list[HandEvent]:
    """docs/rules/mighty.md §10.4, item 3: two different entries, each a card or first_trick; one
    ``FriendCalled`` event per call, in the order given."""
    if len(calls) != 2:
        raise BadFriendCall(f"A list of calls has exactly two entries, not {len(calls)}.")
    if calls[0] == calls[1]:
        raise BadFriendCall(f"{calls[0]} is called twice; the two calls must differ.")
    if "none" in calls:
        raise BadFriendCall("none is a call of its own, not an entry of a list of calls.")
    if "first_trick" in calls and not state.rules.first_trick_friend_allowed:
        raise BadFriendCall("This table's rules do not allow a first-trick friend.")
    for call in calls:
        if call != "first_trick":
            _check_called_card(state, call, discards)
    _check_lead_advice(state, cmd.lead_suit)
    return [
        FriendCalled(seat=cmd.seat, call=call, lead_suit=cmd.lead_suit) if call == "first_trick"
        else FriendCalled(seat=cmd.seat, call="card", card=call, lead_suit=cmd.lead_suit,
                          holder=holder_of(state.hands, call))
        for call in calls
    ]


def holder_of(hands: tuple[tuple[str, ...], ...], card: str) -> int:
    """§4.3: the friend is whoever holds the called card (with two packs, that copy)."""
    return next(seat for seat, hand in enumerate(hands) if card in hand)


def _check_called_card(state: Exchange, friend: str, discards: tuple[str, ...]) -> None:
    if friend not in state.rules.spec.deck:
        raise BadFriendCall(f"{friend} is not a card of this deck.")
    if friend in state.hands[state.declarer]:
        raise BadFriendCall(f"{friend} is in the declarer's own hand; call another card or none.")
    if friend in discards:
        raise BadFriendCall(f"{friend} is among the discards; call another card or none.")


def _check_lead_advice(state: Exchange, lead_suit: str | None) -> None:
    """§4.4: with a 20 NT contract the declarer may name a suit for the friend to lead."""
    if lead_suit is None:
        return
    top = state.rules.spec.max_bid
    if (state.points, state.trump) != (top, "NT"):
        raise BadFriendCall(f"A lead suit may be named only with a {top} NT contract.")


def friend_call_options(state: Exchange) -> list[str | tuple[str, ...]]:
    """Every call ``decide_call_friend`` accepts, for legal_commands (with two friends,
    every pair of different entries in one order)."""
    rules = state.rules
    if rules.spec.max_friends == 0:
        return ["none"]
    held = set(state.hands[state.declarer]) | set(state.discards or ())
    cards = [c for c in rules.spec.deck if c not in held]
    specials = ["first_trick", "none"] if rules.first_trick_friend_allowed else ["none"]
    options: list[str | tuple[str, ...]] = [*cards, *specials]
    if rules.spec.max_friends >= 2:
        entries = cards + specials[:-1]
        options.extend(combinations(entries, 2))
    return options

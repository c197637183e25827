"""The hand decider (docs/architecture.md, "Layers"): ``decide(state, command) -> events`` and
``evolve(state, event) -> state``. Replaying a hand is folding ``evolve`` over its events,
starting from ``None`` with the ``HandDealt`` event."""

from __future__ import annotations

from typing import Any, Final, TypeVar, assert_never

from msgspec import UNSET, UnsetType
from msgspec.structs import replace

from domain.errors import MalformedCommand, WrongPhase
from domain.mighty import bidding, exchange, legacy
from domain.mighty.cards import SUIT_OF, SUITS, TRUMPS, card_names, is_joker, points_of
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
from domain.mighty.events import (
    AuctionWon,
    BiddingReopened,
    BidMade,
    CardPlayed,
    CardsDiscarded,
    DeclarerAlone,
    FriendCalled,
    FriendRevealed,
    HandDealt,
    HandEvent,
    HandPassedOut,
    HandScored,
    KittyExchanged,
    KittyTaken,
    MisdealClaimed,
    Passed,
    TrickWon,
    TrumpChanged,
)
from domain.mighty.play import (
    check_play,
    is_last_trick,
    joker_call_has_effect,
    lead_calls_joker,
    trick_winner,
)
from domain.mighty.rules import VARIANTS, RuleSet
from domain.mighty.scoring import hand_scores, is_made
from domain.mighty.state import Bidding, Exchange, Finished, HandState, Playing, Redeal

T = TypeVar("T")


def deal_event(
    rules: RuleSet,
    *,
    dealer: int,
    hands: tuple[tuple[str, ...], ...],
    kitty: tuple[str, ...],
    first_bidder: int | None = None,
    hand_no: int = 0,
    commitment: str | None = None,
) -> HandDealt:
    """The event that starts a hand. The deal is data: the service shuffles, not us."""
    if first_bidder is None:
        first_bidder = (dealer + 1) % rules.spec.players if rules.first_bidder == "left_of_dealer" else dealer
    return HandDealt(
        rules=rules, rules_fingerprint=rules.fingerprint(), dealer=dealer,
        first_bidder=first_bidder, hands=hands, kitty=kitty, hand_no=hand_no,
        commitment=commitment,
    )


# ---------------------------------------------------------------- decide

def decide(state: HandState, cmd: HandCommand) -> list[HandEvent]:
    """The events a command causes, or a ``RuleError`` saying why it is refused."""
    check_well_formed(state, cmd)
    if isinstance(cmd, Play):
        if not isinstance(state, Playing):
            raise WrongPhase(_phase_message(state, "play a card"))
        return decide_play(state, cmd)
    if isinstance(cmd, (Bid, Pass, ClaimMisdeal)):
        if not isinstance(state, Bidding):
            raise WrongPhase(_phase_message(state, "bid"))
        if isinstance(cmd, Bid):
            return bidding.decide_bid(state, cmd)
        if isinstance(cmd, Pass):
            return bidding.decide_pass(state, cmd)
        return bidding.decide_misdeal(state, cmd)
    if not isinstance(state, Exchange):
        raise WrongPhase(_phase_message(state, "do that"))
    if isinstance(cmd, ExchangeCommand):
        if state.rules.spec.kitty_keep is None:
            raise WrongPhase(f"There is no kitty exchange in {state.rules.variant}.")
        return exchange.decide_exchange(state, cmd)
    if isinstance(cmd, Discard):
        return exchange.decide_discard(state, cmd)
    if isinstance(cmd, ChangeTrump):
        return exchange.decide_change_trump(state, cmd)
    return exchange.decide_call_friend(state, cmd)


def _phase_message(state: HandState, what: str) -> str:
    if isinstance(state, Finished | Redeal):
        return f"The hand is over; nobody may {what} now."
    names = {Bidding: "the auction", Exchange: "the declarer's exchange", Playing: "play"}
    return f"The hand is in {names[type(state)]}; nobody may {what} now."


def _malformed(message: str) -> MalformedCommand:
    return MalformedCommand(message)


_CARD_NAMES: Final = {v.name: card_names(v.packs) for v in VARIANTS.values()}


def check_well_formed(state: HandState, cmd: HandCommand) -> None:
    """Field values the rules cannot even read are ``malformed_command`` (docs/hand-files.md)."""
    if not 0 <= cmd.seat < len(state.hands):
        raise _malformed(f"Seat {cmd.seat} does not exist at a table of {state.players}.")
    names = _CARD_NAMES[state.rules.variant]  # two packs: only two-pack names (AS#1, JK3)
    if isinstance(cmd, Play):
        if cmd.card not in names:
            raise _malformed(f"{cmd.card!r} is not a card.")
        leads_joker = isinstance(state, Playing) and not state.trick and is_joker(cmd.card)
        if leads_joker and cmd.suit is not None and cmd.suit not in SUITS:
            # only a joker lead uses `suit`; elsewhere it is ignored, as unused fields are
            raise _malformed(f"{cmd.suit!r} is not a suit: use S, H, D or C.")
    elif isinstance(cmd, (Bid, ChangeTrump)):
        if cmd.trump not in TRUMPS:
            raise _malformed(f"{cmd.trump!r} is not a trump: use S, H, D, C or NT.")
    elif isinstance(cmd, Discard):
        for card in (*cmd.cards, *(cmd.take or ())):
            if card not in names:
                raise _malformed(f"{card!r} is not a card.")
    elif isinstance(cmd, CallFriend):
        if not isinstance(cmd.friend, str) and state.rules.spec.max_friends < 2:
            raise _malformed("This variant calls one friend: `friend` is one card, 'first_trick' or 'none'.")
        calls = (cmd.friend,) if isinstance(cmd.friend, str) else cmd.friend
        for call in calls:
            if call not in exchange.FRIEND_CALLS and call not in names:
                raise _malformed(f"{call!r} is not a card, 'first_trick' or 'none'.")
        if cmd.lead_suit is not None and cmd.lead_suit not in SUITS:
            raise _malformed(f"{cmd.lead_suit!r} is not a suit: use S, H, D or C.")
    elif isinstance(cmd, ExchangeCommand) and not (cmd.take in names and cmd.discard in names):
        raise _malformed("An exchange names one card to take and one to discard.")


def decide_play(state: Playing, cmd: Play) -> list[HandEvent]:
    check_play(state, cmd)
    seat, card = cmd.seat, cmd.card
    leading = not state.trick
    named = cmd.suit if leading and is_joker(card) else None
    if lead_calls_joker(state, card, cmd.joker_call):
        played = CardPlayed(seat=seat, card=card, suit=named, joker_call=True,
                            joker_call_effective=joker_call_has_effect(state, seat))
    else:
        played = CardPlayed(seat=seat, card=card, suit=named)
    events: list[HandEvent] = [played]
    if state.pending and card in state.pending:  # a called card (not its identical copy)
        events.append(FriendRevealed(seat=seat, call=card))
    if len(state.trick) + 1 < len(state.hands):
        return events
    cards = (*state.trick, card)
    winner = trick_winner(state, cards)
    trick_no = len(state.tricks)
    events.append(TrickWon(trick=trick_no, leader=state.leader, cards=cards, winner=winner,
                           points=points_of(cards)))
    friends = state.friends
    if trick_no == 0 and "first_trick" in state.pending:
        # first_trick names the winner of trick 1, or nobody if the declarer wins it
        if winner == state.declarer:
            events.append(DeclarerAlone())
        else:
            events.append(FriendRevealed(seat=winner, call="first_trick"))
            friends = tuple(sorted({*friends, winner}))
    if is_last_trick(state):
        taken = list(state.taken)
        taken[winner] += points_of(cards)
        events.append(score_hand(state, friends, taken))
    return events


def score_hand(state: Playing, friends: tuple[int, ...], taken: list[int]) -> HandScored:
    """§6: P counts the tricks of the declarer and every friend, plus the discards."""
    side = taken[state.declarer] + sum(taken[f] for f in friends)
    side += points_of(state.discards)
    scores = hand_scores(state.rules, declarer=state.declarer, friends=friends,
                         contract=state.points, trump=state.trump, taken=side)
    # one pack: ``friend`` is the friend; two packs use the state's ``friends`` instead
    friend = None if state.rules.spec.packs > 1 or not friends else friends[0]
    return HandScored(declarer=state.declarer, friend=friend, points=state.points,
                      trump=state.trump, declarer_side_points=side,
                      made=is_made(state.points, side), scores=scores)


# ---------------------------------------------------------------- evolve

def evolve(state: HandState | None, event: HandEvent) -> HandState:
    """Apply one event. Events are facts: nothing is checked here, and no rule is run,
    but for the facts an event stored before version 2 lacks (``legacy``)."""
    if isinstance(event, CardPlayed):
        assert isinstance(state, Playing)
        if event.joker_call and event.joker_call_effective is UNSET:
            event = legacy.card_played(state, event)
        return _card_played(state, event)
    if isinstance(event, TrickWon):
        assert isinstance(state, Playing)
        return _trick_won(state, event)
    if isinstance(event, HandDealt):
        return _dealt(event)
    if isinstance(event, BidMade | Passed | BiddingReopened):
        assert isinstance(state, Bidding)
        return _auction_step(state, event)
    if isinstance(event, HandPassedOut | MisdealClaimed):
        assert isinstance(state, Bidding)
        return _thrown_in(state, event)
    if isinstance(event, AuctionWon):
        assert isinstance(state, Bidding)
        return _auction_won(state, event)
    if isinstance(event, KittyTaken | CardsDiscarded | KittyExchanged | TrumpChanged):
        assert isinstance(state, Exchange)
        return _exchange_step(state, event)
    if isinstance(event, FriendCalled):
        assert isinstance(state, Exchange | Playing)
        if event.card is not None and event.holder is UNSET:
            event = legacy.friend_called(state, event)
        if isinstance(state, Playing):  # the second of two calls (docs/rules/mighty.md §10.4)
            return _second_call(state, event)
        return _friend_called(state, event)
    if isinstance(event, FriendRevealed | DeclarerAlone):
        assert isinstance(state, Playing)
        if isinstance(event, FriendRevealed) and event.call is UNSET:
            event = legacy.friend_revealed(state, event)
        return _revealed(state, event)
    if isinstance(event, HandScored):
        assert isinstance(state, Playing)
        return _scored(state, event)
    assert_never(event)


def _dealt(event: HandDealt) -> Bidding:
    n = len(event.hands)
    return Bidding(
        rules=event.rules, dealer=event.dealer, first_bidder=event.first_bidder,
        hand_no=event.hand_no, hands=event.hands, kitty=event.kitty, dealt=event.hands,
        to_act=event.first_bidder, passed=(False,) * n, acted=(False,) * n,
    )


def _auction_step(state: Bidding, event: BidMade | Passed | BiddingReopened) -> Bidding:
    if isinstance(event, BiddingReopened):
        n = state.players
        return replace(state, round=event.round, passed=(False,) * n, passes_since_bid=0,
                       standing=None, to_act=state.first_bidder)
    seat = event.seat
    acted = _set(state.acted, seat, True)
    if isinstance(event, BidMade):
        entry = (seat, event.points, event.trump)
        return replace(state, auction=(*state.auction, entry), standing=entry, acted=acted,
                       passes_since_bid=0, to_act=bidding.next_bidder(state, seat, state.passed))
    passed = _set(state.passed, seat, True)
    return replace(state, auction=(*state.auction, (seat, 0, "")), passed=passed, acted=acted,
                   passes_since_bid=state.passes_since_bid + 1,
                   to_act=bidding.next_bidder(state, seat, passed))


def _thrown_in(state: Bidding, event: HandPassedOut | MisdealClaimed) -> Redeal:
    claimed = event.seat if isinstance(event, MisdealClaimed) else None
    return Redeal(
        **_carried(state, _HAND_FIELDS),
        reason="misdeal" if claimed is not None else "passed_out", claimed_by=claimed,
    )


def _auction_won(state: Bidding, event: AuctionWon) -> Exchange:
    return Exchange(
        **_carried(state, _HAND_FIELDS),
        declarer=event.declarer, points=event.points, trump=event.trump,
        bid_points=event.points, bid_trump=event.trump, kitty_shown=state.rules.kitty_shown,
    )


def _exchange_step(
    state: Exchange, event: KittyTaken | CardsDiscarded | KittyExchanged | TrumpChanged
) -> Exchange:
    if isinstance(event, TrumpChanged):
        return replace(state, trump=event.trump, points=event.points, trump_changed=True)
    hand = state.hands[event.seat]
    if isinstance(event, KittyTaken):
        if not event.into_hand:
            return replace(state, kitty_left=event.cards, kitty_shown=event.shown)
        return replace(state, hands=_set(state.hands, event.seat, hand + event.cards),
                       kitty_shown=event.shown)
    if isinstance(event, KittyExchanged):
        return _kitty_exchanged(state, event)
    gone = set(event.cards)
    kept = tuple(c for c in hand + (event.taken or ()) if c not in gone)
    state = replace(state, hands=_set(state.hands, event.seat, kept), discards=event.cards)
    if event.taken is None:
        return state
    left = tuple(c for c in state.kitty_left if c not in event.taken)
    return replace(state, kitty_left=left, exchanger=_next_exchanger(state, event.seat, left))


def _kitty_exchanged(state: Exchange, event: KittyExchanged) -> Exchange:
    seat = event.seat
    held = state.hands[seat] + (event.take,)
    at = held.index(event.discard)
    left = tuple(c for c in state.kitty_left if c != event.take)
    return replace(state, hands=_set(state.hands, seat, held[:at] + held[at + 1:]),
                   kitty_left=left, exchanges=(*state.exchanges, (seat, event.take, event.discard)),
                   exchanger=_next_exchanger(state, seat, left))


def _next_exchanger(state: Exchange, after: int, left: tuple[str, ...]) -> int | None:
    """Clockwise from the declarer's left, while kitty cards are left (§7)."""
    nxt = (after + 1) % len(state.hands)
    return None if not left or nxt == state.declarer else nxt


def _friend_called(state: Exchange, event: FriendCalled) -> Playing:
    friend = None if isinstance(event.holder, UnsetType) else event.holder
    assert state.discards is not None
    calls = _calls_of(event)
    return Playing(
        **_carried(state, _CONTRACT_FIELDS),
        discards=state.discards, trump_changed=state.trump_changed, call=event.call,
        called_card=event.card, lead_suit=event.lead_suit,
        friend=friend if state.rules.spec.packs == 1 else None,
        friend_known=event.call == "none", taken=(0,) * state.players,
        leader=state.declarer, to_act=state.declarer,
        calls=calls, pending=calls, friends=() if friend is None else (friend,),
    )


def _calls_of(event: FriendCalled) -> tuple[str, ...]:
    if event.card is not None:
        return (event.card,)
    return () if event.call == "none" else (event.call,)


def _second_call(state: Playing, event: FriendCalled) -> Playing:
    """Two calls are two ``FriendCalled`` events; the second adds its call and holder."""
    calls = _calls_of(event)
    friends = state.friends
    if not isinstance(event.holder, UnsetType):
        friends = tuple(sorted({*friends, event.holder}))
    return replace(state, calls=state.calls + calls, pending=state.pending + calls,
                   friends=friends, friend_known=False)


def _revealed(state: Playing, event: FriendRevealed | DeclarerAlone) -> Playing:
    """The call the event resolves is revealed: a called card just played, or (trick 1
    ended) ``first_trick``, which ``DeclarerAlone`` always resolves."""
    call = event.call if isinstance(event, FriendRevealed) else "first_trick"
    pending = tuple(c for c in state.pending if c != call)
    friends, revealed = state.friends, state.revealed
    if isinstance(event, FriendRevealed):
        friends = tuple(sorted({*friends, event.seat}))
        revealed = tuple(sorted({*revealed, event.seat}))
    if state.rules.spec.packs == 1:
        friend = event.seat if isinstance(event, FriendRevealed) else None
        return replace(state, friend=friend, friend_known=True, pending=pending,
                       friends=friends, revealed=revealed)
    return replace(state, friend_known=not pending, pending=pending, friends=friends,
                   revealed=revealed)


def _card_played(state: Playing, event: CardPlayed) -> Playing:
    seat, card = event.seat, event.card
    hand = state.hands[seat]
    at = hand.index(card)
    hands = _set(state.hands, seat, hand[:at] + hand[at + 1:])
    nxt = (seat + 1) % len(hands)
    if state.trick:
        return replace(state, hands=hands, trick=(*state.trick, card), to_act=nxt)
    led = event.suit if event.suit is not None else SUIT_OF[card]
    called = event.joker_call and event.joker_call_effective is True
    return replace(state, hands=hands, trick=(card,), to_act=nxt, led_suit=led,
                   joker_called=called, joker_call_made=event.joker_call)


def _trick_won(state: Playing, event: TrickWon) -> Playing:
    taken = _set(state.taken, event.winner, state.taken[event.winner] + event.points)
    return replace(state, tricks=(*state.tricks, event), taken=taken, trick=(),
                   leader=event.winner, to_act=event.winner, led_suit=None,
                   joker_called=False, joker_call_made=False)


def _scored(state: Playing, event: HandScored) -> Finished:
    return Finished(
        **_carried(state, _CONTRACT_FIELDS + _PLAYED_FIELDS),
        friend=event.friend, friend_known=True, scored=event, revealed=state.friends,
    )


# What a phase change carries over from the phase before (state.py's base classes).
_HAND_FIELDS = ("rules", "dealer", "first_bidder", "hand_no", "hands", "kitty", "dealt", "auction")
_CONTRACT_FIELDS = _HAND_FIELDS + (
    "declarer", "points", "trump", "bid_points", "bid_trump", "kitty_shown", "kitty_left",
    "exchanges",
)
_PLAYED_FIELDS = ("discards", "trump_changed", "call", "called_card", "lead_suit", "tricks", "taken",
                  "calls", "pending", "friends")


def _carried(state: HandState, fields: tuple[str, ...]) -> dict[str, Any]:
    return {name: getattr(state, name) for name in fields}


def _set(items: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    return items[:index] + (value,) + items[index + 1:]


def is_terminal(state: HandState) -> bool:
    return isinstance(state, Finished | Redeal)


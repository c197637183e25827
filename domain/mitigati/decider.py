"""The Mitigati decider (docs/architecture.md, "Layers"): ``initial_state``, ``decide(state, command) ->
events``, ``evolve(state, event) -> state``, ``is_terminal``. Replaying a hand is folding
``evolve`` over its events, starting from ``None`` with the ``HandDealt`` event."""

from __future__ import annotations

from typing import assert_never

from msgspec.structs import replace

from domain.errors import MalformedCommand, NotYourTurn, WrongPhase
from domain.mitigati import bargaining, declarations, discard, play
from domain.mitigati.cards import is_card
from domain.mitigati.commands import Bargain, Declare, Discard, MitigatiCommand, Play
from domain.mitigati.events import (
    Bargained,
    CardPlayed,
    CardsDiscarded,
    DealAbandoned,
    Declared,
    FoolCardGiven,
    FoolCardOwed,
    HandDealt,
    HandScored,
    MitigatiEvent,
    PacketsDealt,
    SessionEnded,
    TrickWon,
)
from domain.mitigati.rules import (
    PLAYERS,
    ROUNDS,
    TRICKS,
    RuleSet,
    first_to_speak,
    packet_size,
    right_of,
)
from domain.mitigati.scoring import hand_scored
from domain.mitigati.state import (
    Abandoned,
    Bargaining,
    Declaring,
    Discarding,
    Finished,
    FoolRecord,
    MitigatiState,
    Packets,
    Playing,
    is_terminal,
    to_act,
)

__all__ = ["deal_event", "decide", "deal_order", "evolve", "initial_state", "is_terminal",
           "packets_from_order"]

FIRST_SESSION_ROUNDS = 2  # rounds 1 and 2 are dealt when the hand starts (§4)


def deal_event(rules: RuleSet, *, dealer: int, packets: Packets, hand_no: int = 0) -> HandDealt:
    """The event that starts a hand. The deal is data: the service shuffles, not us."""
    return HandDealt(rules=rules, rules_fingerprint=rules.fingerprint(), dealer=dealer,
                     packets=packets, hand_no=hand_no)


def packets_from_order(order: tuple[str, ...], dealer: int) -> Packets:
    """A shuffled deck cut into §2's packets: round by round, in each round seat 0, 1, 2,
    each taking its packet's size (5, or 8 for the dealer's last) off the top."""
    rows, at = [], 0
    for r in range(ROUNDS):
        row = []
        for seat in range(PLAYERS):
            size = packet_size(r, seat, dealer)
            row.append(tuple(order[at:at + size]))
            at += size
        rows.append(tuple(row))
    return tuple(rows)


def deal_order(packets: Packets) -> tuple[str, ...]:
    """The card order a deal was cut from (the inverse of ``packets_from_order``)."""
    return tuple(c for row in packets for packet in row for c in packet)


def initial_state(event: HandDealt) -> Bargaining:
    hands = tuple(tuple(c for r in range(FIRST_SESSION_ROUNDS) for c in event.packets[r][seat])
                  for seat in range(PLAYERS))
    return Bargaining(rules=event.rules, dealer=event.dealer, hand_no=event.hand_no,
                      packets=event.packets, rounds_dealt=FIRST_SESSION_ROUNDS, hands=hands,
                      session=1, to_act=first_to_speak(event.dealer))


# ---------------------------------------------------------------- decide

_PHASE_OF: dict[type, type] = {Bargain: Bargaining, Discard: Discarding, Declare: Declaring, Play: Playing}
_WHAT: dict[type, str] = {Bargain: "bargain", Discard: "discard", Declare: "declare", Play: "play a card"}
_PHASE_WORDS: dict[type, str] = {Bargaining: "a bargaining session", Discarding: "the dealer's discard",
                                 Declaring: "the declarations", Playing: "play"}


def decide(state: MitigatiState, cmd: MitigatiCommand) -> list[MitigatiEvent]:
    """The events a command causes, or a ``RuleError`` saying why it is refused. §10's
    precedence: malformed_command, wrong_phase, not_your_turn, then the phase's own."""
    check_well_formed(cmd)
    if not isinstance(state, _PHASE_OF[type(cmd)]):
        raise WrongPhase(_phase_message(state, _WHAT[type(cmd)]))
    if cmd.seat != to_act(state):
        raise NotYourTurn(f"It is seat {to_act(state)}'s turn, not seat {cmd.seat}'s.")
    if isinstance(cmd, Bargain):
        assert isinstance(state, Bargaining)
        return bargaining.decide_bargain(state, cmd)
    if isinstance(cmd, Discard):
        assert isinstance(state, Discarding)
        return list(discard.decide_discard(state, cmd))
    if isinstance(cmd, Declare):
        assert isinstance(state, Declaring)
        return list(declarations.decide_declare(state, cmd))
    assert isinstance(state, Playing)
    return decide_play(state, cmd)


def _phase_message(state: MitigatiState, what: str) -> str:
    if isinstance(state, Finished):
        return f"The hand is over; nobody may {what} now."
    if isinstance(state, Abandoned):
        return f"The deal was abandoned; nobody may {what} now."
    return f"The hand is in {_PHASE_WORDS[type(state)]}; nobody may {what} now."


def check_well_formed(cmd: MitigatiCommand) -> None:
    """Values the rules cannot even read are ``malformed_command`` (§3)."""
    if not 0 <= cmd.seat < PLAYERS:
        raise MalformedCommand(f"Seat {cmd.seat} is not a seat of Mitigati (0, 1 or 2).")
    if isinstance(cmd, Bargain) and cmd.action in ("pay", "sell") and cmd.amount is None:
        raise MalformedCommand(f"A {cmd.action} needs an integer amount.")
    cards = cmd.cards if isinstance(cmd, Discard) else (cmd.card,) if isinstance(cmd, Play) else ()
    for card in cards:
        if not is_card(card):
            raise MalformedCommand(f"{card!r} is not a card name.")


def decide_play(state: Playing, cmd: Play) -> list[MitigatiEvent]:
    play.check_play(state.hands[cmd.seat], state.trick, cmd.seat, cmd.card)
    events: list[MitigatiEvent] = [CardPlayed(seat=cmd.seat, card=cmd.card)]
    trick = (*state.trick, cmd.card)
    if len(trick) < PLAYERS:
        return events
    events.extend(play.close_trick(state, trick))
    if len(state.tricks) + 1 == TRICKS:
        events.append(_final_score(state, events))
    return events


def _final_score(state: Playing, events: list[MitigatiEvent]) -> HandScored:
    """Fold this command's events onto the state to learn the won cards at the end."""
    after: MitigatiState = state
    for event in events:
        after = evolve(after, event)
    assert isinstance(after, Playing)
    return hand_scored(after.won, after.dealer, after.discards, after.declarations)


# ---------------------------------------------------------------- evolve

def evolve(state: MitigatiState | None, event: MitigatiEvent) -> MitigatiState:
    """Apply one event. Events are facts: nothing is checked again here."""
    if isinstance(event, HandDealt):
        return initial_state(event)
    assert state is not None, "a hand starts with HandDealt"
    if isinstance(event, Bargained):
        assert isinstance(state, Bargaining)
        return bargaining.apply_bargained(state, event)
    if isinstance(event, SessionEnded):
        return state
    if isinstance(event, PacketsDealt):
        assert isinstance(state, Bargaining)
        return bargaining.apply_packets_dealt(state, event)
    if isinstance(event, DealAbandoned):
        return Abandoned(rules=state.rules, dealer=state.dealer, hand_no=state.hand_no,
                         packets=state.packets, rounds_dealt=state.rounds_dealt, hands=state.hands,
                         session=event.session, payer=event.payer, seller=event.seller,
                         amount=event.amount, scores=event.scores)
    if isinstance(event, CardsDiscarded):
        assert isinstance(state, Discarding)
        return discard.apply_discarded(state, event)
    if isinstance(event, Declared):
        assert isinstance(state, Declaring)
        return declarations.apply_declared(state, event)
    if isinstance(event, CardPlayed):
        assert isinstance(state, Playing)
        return _apply_card_played(state, event)
    if isinstance(event, TrickWon):
        assert isinstance(state, Playing)
        return play.apply_trick_won(state, event)
    if isinstance(event, FoolCardOwed | FoolCardGiven):
        assert isinstance(state, Playing)
        return _apply_fool(state, event)
    if isinstance(event, HandScored):
        assert isinstance(state, Playing)
        return Finished(rules=state.rules, dealer=state.dealer, hand_no=state.hand_no,
                        packets=state.packets, rounds_dealt=state.rounds_dealt, hands=state.hands,
                        discards=state.discards, declarations=state.declarations,
                        tricks=state.tricks, won=state.won, fool=state.fool,
                        points=event.points, scores=event.scores)
    assert_never(event)


def _apply_card_played(state: Playing, event: CardPlayed) -> Playing:
    hand = state.hands[event.seat]
    i = hand.index(event.card)
    hands = tuple(hand[:i] + hand[i + 1:] if seat == event.seat else h
                  for seat, h in enumerate(state.hands))
    return replace(state, hands=hands, trick=(*state.trick, event.card), to_act=right_of(event.seat))


def _apply_fool(state: Playing, event: FoolCardOwed | FoolCardGiven) -> Playing:
    won = state.won
    if state.fool is None:  # the close of the Fool's trick: the Fool goes to its player
        won = play.move_card(won, "FOOL", event.to, event.seat)
    if isinstance(event, FoolCardOwed):
        return replace(state, won=won, fool=FoolRecord(seat=event.seat, trick=event.trick, to=event.to))
    won = play.move_card(won, event.card, event.seat, event.to)
    record = FoolRecord(seat=event.seat, trick=event.trick, to=event.to, card=event.card,
                        paid_in=event.paid_in)
    return replace(state, won=won, fool=record)

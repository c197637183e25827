"""Bargaining sessions (docs/rules/mitigati.md, "Bargaining").

One payer and one seller per session, first come. The payer only raises, the seller only
lowers, and neither may pass the other. When the offer meets the ask the third player
answers at once: ``pass`` abandons the deal, ``continue`` ends the session.
"""

from __future__ import annotations

from msgspec.structs import replace

from domain.errors import BadBargain
from domain.mitigati.commands import Bargain
from domain.mitigati.events import (
    Bargained,
    DealAbandoned,
    MitigatiEvent,
    PacketsDealt,
    SessionEnded,
)
from domain.mitigati.rules import PLAYERS, SESSIONS, first_to_speak, right_of
from domain.mitigati.state import Bargaining, Discarding, MitigatiState


def third_player(state: Bargaining) -> int:
    assert state.payer is not None and state.seller is not None
    return 3 - state.payer - state.seller


def decide_bargain(state: Bargaining, cmd: Bargain) -> list[MitigatiEvent]:
    """The seat to speak is checked by the decider; here only ``bad_bargain``."""
    said = Bargained(seat=cmd.seat, action=cmd.action,
                     amount=cmd.amount if cmd.action in ("pay", "sell") else None)
    if state.agreed:
        return _answer_agreement(state, cmd, said)
    if cmd.action == "continue":
        return [said, *end_session(state, "continue")]
    if cmd.action == "pass":
        if state.passes + 1 == PLAYERS:
            return [said, *end_session(state, "passes")]
        return [said]
    check_offer(state, cmd)
    return [said]


def _answer_agreement(state: Bargaining, cmd: Bargain, said: Bargained) -> list[MitigatiEvent]:
    if cmd.action == "pay" or cmd.action == "sell":
        raise BadBargain(f"The offer and the ask agree at {state.ask}; seat {cmd.seat} may "
                         "only pass (accept) or continue (refuse).")
    if cmd.action == "continue":
        return [said, *end_session(state, "refused")]
    return [said, abandon(state)]


def check_offer(state: Bargaining, cmd: Bargain) -> None:
    """§4: the rules of ``pay X`` and ``sell X``; each fault is ``bad_bargain``."""
    amount = cmd.amount
    assert amount is not None  # the codec requires it for pay and sell
    if amount < 1:
        raise BadBargain(f"An amount is a whole number of at least 1, not {amount}.")
    paying = cmd.action == "pay"
    mine, other = (state.payer, state.seller) if paying else (state.seller, state.payer)
    role, other_role = ("payer", "seller") if paying else ("seller", "payer")
    if other == cmd.seat:
        raise BadBargain(f"Seat {cmd.seat} is this session's {other_role} and may not {cmd.action}.")
    if mine is not None and mine != cmd.seat:
        raise BadBargain(f"Seat {mine} is already this session's {role}; nobody else may {cmd.action}.")
    standing, limit = (state.offer, state.ask) if paying else (state.ask, state.offer)
    if paying:
        if standing is not None and amount <= standing:
            raise BadBargain(f"The payer may only raise the offer of {standing}, not offer {amount}.")
        if limit is not None and amount > limit:
            raise BadBargain(f"An offer of {amount} is above the standing ask of {limit}.")
    else:
        if standing is not None and amount >= standing:
            raise BadBargain(f"The seller may only lower the ask of {standing}, not ask {amount}.")
        if limit is not None and amount < limit:
            raise BadBargain(f"An ask of {amount} is below the standing offer of {limit}.")


def end_session(state: Bargaining, how: str) -> list[MitigatiEvent]:
    """The session ends without agreement: the next round of packets is dealt."""
    return [SessionEnded(session=state.session, how=how), PacketsDealt(round=state.session + 1)]


def abandon(state: Bargaining) -> DealAbandoned:
    """§4: the payer pays the seller the agreed amount; the third player neither pays nor
    gets anything (the example: scores [8, -8, 0])."""
    assert state.payer is not None and state.seller is not None and state.offer is not None
    scores = [0] * PLAYERS
    scores[state.payer] -= state.offer
    scores[state.seller] += state.offer
    return DealAbandoned(session=state.session, payer=state.payer, seller=state.seller,
                         amount=state.offer, scores=tuple(scores))


# ---------------------------------------------------------------- evolve

def apply_bargained(state: Bargaining, event: Bargained) -> Bargaining:
    history = (*state.history, (event.seat, event.action, event.amount))
    if event.action in ("pass", "continue"):
        return replace(state, passes=state.passes + 1, to_act=right_of(event.seat), history=history)
    if event.action == "pay":
        state = replace(state, payer=event.seat, offer=event.amount, passes=0, history=history)
    else:
        state = replace(state, seller=event.seat, ask=event.amount, passes=0, history=history)
    next_seat = third_player(state) if state.agreed else right_of(event.seat)
    return replace(state, to_act=next_seat)


def apply_packets_dealt(state: Bargaining, event: PacketsDealt) -> MitigatiState:
    hands = tuple(hand + state.packets[event.round][seat] for seat, hand in enumerate(state.hands))
    if state.session == SESSIONS:
        return Discarding(rules=state.rules, dealer=state.dealer, hand_no=state.hand_no,
                          packets=state.packets, rounds_dealt=event.round + 1, hands=hands)
    return Bargaining(rules=state.rules, dealer=state.dealer, hand_no=state.hand_no,
                      packets=state.packets, rounds_dealt=event.round + 1, hands=hands,
                      session=state.session + 1, to_act=first_to_speak(state.dealer))

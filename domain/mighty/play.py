"""Play (docs/rules/mighty.md §5): following suit, the first trick, the Joker, the Ripper,
and who wins a trick. One legality function feeds ``decide``, the bots and the views."""

from __future__ import annotations

from typing import Final

from domain.errors import (
    CardNotInHand,
    IllegalFirstLead,
    JokerSuitRequired,
    MustFollowSuit,
    MustPlayJoker,
    NotYourTurn,
    RuleError,
)
from domain.mighty.cards import (
    JOKERS,
    RANK_OF,
    SUIT_NAMES,
    SUIT_OF,
    SUITS,
    TRUMPS,
    is_joker,
    mighties,
    ripper_of,
    rippers,
)
from domain.mighty.commands import Play
from domain.mighty.rules import VARIANTS
from domain.mighty.state import Playing


def ripper(state: Playing) -> str:
    """The one-pack Ripper's name (both copies: ``ripper_cards``)."""
    return ripper_of(state.trump, state.rules.spec.ripper_rank)


# (trump, variant) -> the Mighty / the Ripper cards: one dict lookup on the hot path.
_MIGHTY: Final = {(t, v.name): mighties(t, v.packs) for t in TRUMPS for v in VARIANTS.values()}
_ANYTIME: Final = {key: cards | JOKERS for key, cards in _MIGHTY.items()}  # §5: playable any time
_RIPPER: Final = {(t, v.name): rippers(t, v.ripper_rank, v.packs) for t in TRUMPS for v in VARIANTS.values()}


def ripper_cards(state: Playing) -> frozenset[str]:
    """The Ripper: one card, or both copies with two packs (docs/rules/mighty.md §10.1)."""
    return _RIPPER[state.trump, state.rules.variant]


def mighty_cards(state: Playing) -> frozenset[str]:
    """The Mighty: one card, or both copies with two packs (docs/rules/mighty.md §10.1)."""
    return _MIGHTY[state.trump, state.rules.variant]


def is_last_trick(state: Playing) -> bool:
    return len(state.tricks) == state.rules.spec.hand_size - 1


def joker_has_power(state: Playing) -> bool:
    """§5: none in the first trick, the last trick, or a trick led by a Ripper joker call."""
    return bool(state.tricks) and not is_last_trick(state) and not state.joker_call_made


def lead_calls_joker(state: Playing, card: str, declared: bool | None) -> bool:
    """§5 joker call: a Ripper lead outside the first trick calls the joker (or, with
    ``joker_call = declared``, when the leader says so)."""
    if state.trick or not state.tricks or card not in ripper_cards(state):
        return False
    if state.rules.joker_call == "declared":
        return bool(declared)
    return True


def joker_call_has_effect(state: Playing, leader: int) -> bool:
    """§5 joker call: none "if the Joker is already played, or the leader holds it", that
    is unless another seat holds a Joker (with two packs, any of the four)."""
    return any(is_joker(c) for s, hand in enumerate(state.hands) if s != leader for c in hand)


def _restricted_first_lead(state: Playing, card: str) -> bool:
    return is_joker(card) or card in ripper_cards(state) or SUIT_OF[card] == state.trump


# What limits a seat's cards, for the refusal of any other card.
FIRST_LEAD, JOKER_CALLED, FOLLOW_SUIT = "first_lead", "joker_called", "follow_suit"
Limit = str | None


def playable_cards(state: Playing, hand: tuple[str, ...]) -> tuple[tuple[str, ...], Limit]:
    """§5: the cards of ``hand`` its seat may play to the trick now, and the rule that
    leaves out the others (None: every card may be played). The one legality rule:
    ``check_play`` refuses a card outside it, ``legal_plays`` lists the plays within it.
    - leading the first trick: no trump, Joker or Ripper unless nothing else is held;
    - following, the Mighty and the Jokers may always be played;
    - a Ripper's joker call in effect: a held Joker (or the Mighty), nothing else;
    - else the led (or joker-named) suit when held, the Mighty of that suit counting.

    The last answer is remembered for its state: a bot or a view asks ``legal_commands``
    and then ``decide`` of the same state, which would otherwise work it out twice."""
    last = _LAST[0]
    if last[0] is state and last[1] is hand:
        return last[2]
    answer = _playable(state, hand)
    _LAST[0] = (state, hand, answer)  # one tuple, swapped whole: safe between threads
    return answer


_LAST: list[tuple[object, object, tuple[tuple[str, ...], Limit]]] = [(None, None, ((), None))]


def _playable(state: Playing, hand: tuple[str, ...]) -> tuple[tuple[str, ...], Limit]:
    if not state.trick:
        if state.tricks:
            return hand, None
        free = tuple(c for c in hand if not _restricted_first_lead(state, c))
        return (free, FIRST_LEAD) if free and len(free) < len(hand) else (hand, None)
    key = (state.trump, state.rules.variant)
    anytime = _ANYTIME[key]
    free = tuple(c for c in hand if c in anytime)
    if free and state.joker_called and any(c in JOKERS for c in free):
        return (free, JOKER_CALLED) if len(free) < len(hand) else (hand, None)
    led = state.led_suit
    mighty = _MIGHTY[key]
    suited = tuple(c for c in hand if SUIT_OF[c] == led and c not in mighty)
    if suited:
        allowed = suited + free  # in this order: the views list them so
        return allowed, FOLLOW_SUIT if len(allowed) < len(hand) else None
    if free and any(SUIT_OF[c] == led for c in free):  # only Mighties of the led suit
        return (free, FOLLOW_SUIT) if len(free) < len(hand) else (hand, None)
    return hand, None


def check_play(state: Playing, cmd: Play) -> None:
    """Raise the first refusal in docs/hand-files.md's order; return when the play is legal."""
    seat, card = cmd.seat, cmd.card
    if seat != state.to_act:
        raise NotYourTurn(f"It is seat {state.to_act}'s turn to play, not seat {seat}'s.")
    hand = state.hands[seat]
    if card not in hand:
        raise CardNotInHand(f"Seat {seat} does not hold {card}.")
    if not state.trick and is_joker(card) and cmd.suit is None:
        raise JokerSuitRequired(f"Seat {seat} leads the Joker and must name a suit (S, H, D or C).")
    allowed, limit = playable_cards(state, hand)
    if limit is not None and card not in allowed:
        raise _refusal(state, seat, card, limit)


def _refusal(state: Playing, seat: int, card: str, limit: str) -> RuleError:
    if limit == FIRST_LEAD:
        return IllegalFirstLead(
            f"The first trick may not be led with {card}: a trump, the Joker or the Ripper "
            "may lead it only when the leader holds nothing else."
        )
    if limit == JOKER_CALLED:
        what = "the Joker (or the Mighty)" if state.rules.spec.packs == 1 else "a Joker (or a Mighty)"
        return MustPlayJoker(f"The Ripper called the Joker: seat {seat} must play {what}.")
    assert state.led_suit is not None
    name = SUIT_NAMES[state.led_suit]
    return MustFollowSuit(f"Seat {seat} holds {name} and must follow the led suit, {name}.")


def legal_plays(state: Playing, seat: int) -> list[Play]:
    """Every play the rules allow ``seat`` now (``playable_cards``); a joker lead once per
    nameable suit, a Ripper lead under ``joker_call = declared`` with and without the call."""
    if seat != state.to_act:
        return []
    cards, _ = playable_cards(state, state.hands[seat])
    if state.trick:
        return [Play(seat=seat, card=c) for c in cards]
    plays: list[Play] = []
    declared = state.rules.joker_call == "declared"
    for card in cards:
        if is_joker(card):
            plays.extend(Play(seat=seat, card=card, suit=s) for s in SUITS)
        elif declared and state.tricks and card in ripper_cards(state):
            plays.append(Play(seat=seat, card=card, joker_call=True))
            plays.append(Play(seat=seat, card=card, joker_call=False))
        else:
            plays.append(Play(seat=seat, card=card))
    return plays


def seat_at(leader: int, place: int, players: int) -> int:
    """§5: play goes round the table from the leader; the ``place``-th card of a trick
    (0: the lead) is the seat's that many places on."""
    return (leader + place) % players


def trick_winner(state: Playing, cards: tuple[str, ...]) -> int:
    """§5 winner: the (first) Mighty; else the first Joker with power; else the highest
    trump; else the highest card of the led suit; else the powerless Joker that led.
    Identical cards rank equally: the strict comparisons keep the first played."""
    players = state.players
    leader = state.leader
    mighty = mighty_cards(state)
    best: int | None = None
    powered = joker_has_power(state)
    for i, card in enumerate(cards):
        if card in mighty:
            return seat_at(leader, i, players)
        if powered and best is None and card in JOKERS:
            best = i
    if best is not None:
        return seat_at(leader, best, players)
    for suit in (state.trump, state.led_suit):
        best_rank = 0
        for i, card in enumerate(cards):
            if SUIT_OF[card] == suit and RANK_OF[card] > best_rank:
                best, best_rank = i, RANK_OF[card]
        if best is not None:
            return seat_at(leader, best, players)
    return leader  # a powerless Joker led and nobody followed the named suit or trumped

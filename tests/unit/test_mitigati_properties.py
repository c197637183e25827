"""Property tests over random Mitigati hands (docs/hand-files.md, "Mitigati files").

A hand is a random deal and a seed that picks among ``legal_commands`` (a kind of command
first, then one of that kind, as ``mighty bench domain --variant mitigati`` does) until
the hand ends. At every step: each listed command is accepted, a sample of others is
refused with the code an oracle written from §7/§10 expects, and no seat's view holds a
card it has not seen. At the end: every card counted once, 129 points, scores summing to
zero, and folding the events gives the same state.

``HYPOTHESIS_PROFILE=thorough`` plays thousands of hands; the default a few dozen.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.errors import RuleError
from domain.mitigati.cards import CARDS, DECK, FOOL, POINTS, SUIT_OF, TRUMP
from domain.mitigati.commands import Bargain, Declare, Discard, MitigatiCommand, Play
from domain.mitigati.decider import deal_event, decide, evolve, packets_from_order
from domain.mitigati.events import CardPlayed, Declared, MitigatiEvent
from domain.mitigati.game import MITIGATI
from domain.mitigati.legal import legal_commands
from domain.mitigati.rules import make_rules
from domain.mitigati.state import (
    Abandoned,
    Bargaining,
    Declaring,
    Discarding,
    Finished,
    MitigatiState,
    Packets,
    Playing,
    is_terminal,
    to_act,
)
from domain.mitigati.views import audit_view, seat_view, spectator_view
from services.players import pick_by_kind


def random_packets(rng: random.Random, dealer: int) -> Packets:
    """A shuffled tarot deck cut into the packets of docs/hand-files.md, "Mitigati files"."""
    deck = list(DECK)
    rng.shuffle(deck)
    return packets_from_order(tuple(deck), dealer)


THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
SETTINGS = settings(max_examples=3000 if THOROUGH else 100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
EVENTS = msgspec.json.Decoder(list[MitigatiEvent])


def other_type(state: MitigatiState, seat: int) -> MitigatiCommand:
    """A command of another phase's type."""
    if isinstance(state, Playing):
        return Bargain(seat=seat, action="pass")
    return Play(seat=seat, card="KS")


def expected_play_code(state: Playing, seat: int, card: str) -> str | None:
    """§7's oracle: None when the play is legal, else the first code that applies."""
    hand = state.hands[seat]
    if card not in hand:
        return "card_not_in_hand"
    suit = next((SUIT_OF[c] for c in state.trick if c != FOOL), None)
    if card == FOOL or suit is None or SUIT_OF[card] == suit:
        return None
    if any(SUIT_OF[c] == suit for c in hand):
        return "must_follow_suit"
    if SUIT_OF[card] != TRUMP and any(SUIT_OF[c] == TRUMP for c in hand):
        return "must_trump"
    return None


def code_of(state: MitigatiState, command: MitigatiCommand) -> str | None:
    try:
        decide(state, command)
    except RuleError as error:
        return error.code
    return None


def check_step(state: MitigatiState, rng: random.Random, legal: list[MitigatiCommand] | Any) -> None:
    seat = to_act(state)
    assert seat is not None
    sample = [legal[rng.randrange(len(legal))] for _ in range(min(8, len(legal)))]
    if len(legal) <= 30:
        sample = list(legal)
    for command in sample:
        assert code_of(state, command) is None, command
    for other in {0, 1, 2} - {seat}:
        assert legal_commands(state, other) == []
        assert code_of(state, other_type(state, other)) == "wrong_phase"
        if sample:
            assert code_of(state, msgspec.structs.replace(sample[0], seat=other)) == "not_your_turn"
    assert code_of(state, other_type(state, seat)) == "wrong_phase"
    if isinstance(state, Playing):
        for card in rng.sample(DECK, 6):
            want = expected_play_code(state, seat, card)
            assert code_of(state, Play(seat=seat, card=card)) == want
            assert (Play(seat=seat, card=card) in legal) == (want is None)
    if isinstance(state, Discarding):
        honour = next((c for c in state.hands[seat] if c in ("KD", "KC", "KB", "KS", "T20", "T1", FOOL)), None)
        plain = [c for c in state.hands[seat] if c not in ("KD", "KC", "KB", "KS", "T20", "T1", FOOL)]
        if honour is not None:
            assert code_of(state, Discard(seat=seat, cards=(honour, *plain[:2]))) == "bad_discard"
        assert code_of(state, Discard(seat=seat, cards=tuple(plain[:2]))) == "bad_discard"
    if isinstance(state, Declaring):
        accepted = {tuple(sorted(c.combinations)) for c in legal if isinstance(c, Declare)}
        for names in (("tarocchi",), ("kings",), ("mitigati",), ("honours",), ("kings", "mitigati")):
            code = code_of(state, Declare(seat=seat, combinations=names))  # type: ignore[arg-type]
            assert (code is None) == (tuple(sorted(names)) in accepted)
            assert code in (None, "bad_declaration")
    if isinstance(state, Bargaining) and not state.agreed:
        assert code_of(state, Bargain(seat=seat, action="pay", amount=0)) == "bad_bargain"


def seen_cards(events: list[MitigatiEvent], state: MitigatiState, seat: int | None) -> set[str]:
    """What ``seat`` (None: a spectator) has seen: its own packets dealt so far, every played
    card, the trumps shown for tarocchi, and the dealer its own discards."""
    seen = {e.card for e in events if isinstance(e, CardPlayed)}
    seen |= {c for e in events if isinstance(e, Declared) for d in e.declarations for c in d.shown or ()}
    if seat is not None:
        seen |= {c for r in range(state.rounds_dealt) for c in state.packets[r][seat]}
    return seen


def cards_in(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value} & CARDS
    if isinstance(value, dict):
        return set().union(*(cards_in(v) for v in value.values())) if value else set()
    if isinstance(value, list | tuple):
        return set().union(*(cards_in(v) for v in value)) if value else set()
    return set()


def check_views(events: list[MitigatiEvent], state: MitigatiState) -> None:
    for seat in (0, 1, 2):
        view = msgspec.to_builtins(seat_view(state, seat))
        assert cards_in(view) <= seen_cards(events, state, seat), seat
    assert cards_in(msgspec.to_builtins(spectator_view(state))) <= seen_cards(events, state, None)


def play_hand(seed: int) -> tuple[MitigatiState, list[MitigatiEvent]]:
    rng = random.Random(seed)
    dealer = rng.randrange(3)
    dealt = deal_event(make_rules(), dealer=dealer, packets=random_packets(rng, dealer))
    events: list[MitigatiEvent] = [dealt]
    state = evolve(None, dealt)
    step = 0
    while not is_terminal(state):
        seat = to_act(state)
        assert seat is not None
        legal = legal_commands(state, seat)
        assert len(legal) > 0
        if step % 7 == 0 or not isinstance(state, Playing):
            check_step(state, rng, legal)
            check_views(events, state)
        new = decide(state, pick_by_kind(rng, MITIGATI.command_kinds(legal)))
        for event in new:
            state = evolve(state, event)
        events.extend(new)
        step += 1
    check_views(events, state)
    return state, events


@SETTINGS
@given(st.integers(min_value=0, max_value=2**32))
def test_random_hands_keep_every_law(seed: int) -> None:
    state, events = play_hand(seed)
    replayed: MitigatiState | None = None
    for event in EVENTS.decode(msgspec.json.encode(events)):  # through the wire format too
        replayed = evolve(replayed, event)
    assert replayed == state
    assert sum(state.scores) == 0
    if isinstance(state, Abandoned):
        assert sorted(state.scores) == sorted((-state.amount, 0, state.amount))
        return
    assert isinstance(state, Finished)
    counted = [c for won in state.won for c in won] + list(state.discards)
    assert Counter(counted) == Counter(DECK)  # every card counted once
    assert len(state.tricks) == 25 and all(len(t.cards) == 3 for t in state.tricks)
    assert state.points == tuple(sum(POINTS[c] for c in won) + (sum(POINTS[c] for c in state.discards)
                                                                 if seat == state.dealer else 0)
                                 for seat, won in enumerate(state.won))
    assert sum(state.points) == 129
    declared = [0, 0, 0]
    for d in state.declarations:
        declared[d.seat] += d.value
    assert state.scores == tuple(p - 43 + 2 * declared[s] - sum(declared) + declared[s]
                                 for s, p in enumerate(state.points))
    assert state.fool is not None and state.fool.card is not None  # always settled
    assert cards_in(msgspec.to_builtins(audit_view(state))) == CARDS


def test_the_random_policy_reaches_every_ending() -> None:
    """The property above is worth something only if random hands both finish and get
    abandoned, and the Fool is settled every way."""
    endings: Counter[str] = Counter()
    for seed in range(60):
        state, _ = play_hand(seed)
        endings[type(state).__name__] += 1
        if isinstance(state, Finished):
            assert state.fool is not None
            endings["fool_" + ("itself" if state.fool.card == FOOL else
                               "at_once" if state.fool.paid_in == state.fool.trick else "later")] += 1
    assert endings["Finished"] and endings["Abandoned"]
    assert endings["fool_at_once"] and endings["fool_later"]

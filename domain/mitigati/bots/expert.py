"""The Mitigati expert: determinized search from the seat's view alone (as Mighty's,
``domain.mighty.bots.expert``): sample worlds consistent with the view, play each
candidate and then the whole hand out with beginners, keep the best mean score.

Candidates: in bargaining the beginner's word, pass, continue, and taking a standing
price (paying the ask, selling at the offer); the discard, one of the sets of the
lowest-valued cards that are not honours; the declaration is the best one, no search;
a play is a legal card, low one-point cards of a suit that play alike dropped.
"""

from __future__ import annotations

from itertools import combinations
from typing import Final

from domain.bots import Budget, Playouts
from domain.mitigati.bots import beginner
from domain.mitigati.bots.worlds import knowledge, world
from domain.mitigati.cards import POINTS, STRENGTH, SUIT_OF
from domain.mitigati.commands import Bargain, Discard, MitigatiCommand, Play
from domain.mitigati.decider import decide, evolve
from domain.mitigati.rules import RuleSet
from domain.mitigati.state import Abandoned, Finished, MitigatiState, is_terminal, to_act
from domain.mitigati.views import MitigatiView
from domain.prng import Rng

DEFAULT_PLAYOUTS: Final = 72
MAX_DISCARDS: Final = 6
MAX_DISCARD_POOL: Final = 5  # the sets are drawn from the five lowest-valued cards


def playout_value(state: MitigatiState, seat: int) -> float:
    while not is_terminal(state):
        actor = to_act(state)
        assert actor is not None
        for event in decide(state, beginner.act(state, actor)):
            state = evolve(state, event)
    assert isinstance(state, Finished | Abandoned)
    return float(state.scores[seat])


def _after(state: MitigatiState, command: MitigatiCommand) -> MitigatiState:
    for event in decide(state, command):
        state = evolve(state, event)
    return state


def candidates_for(view: MitigatiView) -> list[MitigatiCommand]:
    first = beginner.choose(view)
    seat = view.viewer
    assert seat is not None and view.hand is not None
    out: list[MitigatiCommand] = [first]

    def add(command: MitigatiCommand) -> None:
        if command not in out:
            out.append(command)

    if view.phase == "bargaining":
        b = view.bargaining
        assert b is not None
        offers: list[MitigatiCommand] = [
            Bargain(seat=seat, action="pass"), Bargain(seat=seat, action="continue"),
            Bargain(seat=seat, action="pay", amount=b.ask), Bargain(seat=seat, action="sell", amount=b.offer)]
        for offer in offers:
            if offer in view.legal:
                add(offer)
    elif view.phase == "discard":
        ranked = beginner.discard_order(view.hand)  # the beginner discards the first three
        for chosen in combinations(ranked[:MAX_DISCARD_POOL], 3):
            add(Discard(seat=seat, cards=tuple(c for c in view.hand if c in chosen)))
            if len(out) >= MAX_DISCARDS:
                break
    elif view.phase == "play":
        by_suit: dict[str | None, list[str]] = {}
        for legal in view.legal:
            assert isinstance(legal, Play)
            if POINTS[legal.card] == 1:
                by_suit.setdefault(SUIT_OF[legal.card], []).append(legal.card)
            else:
                add(legal)
        for group in by_suit.values():
            group.sort(key=lambda c: STRENGTH[c])
            for card in dict.fromkeys([group[0], group[-1]]):
                add(Play(seat=seat, card=card))
    return out


def expert_policy(rules: RuleSet, view: MitigatiView, seed: int, budget: Budget) -> MitigatiCommand:
    rng = Rng(seed)
    assert view.viewer is not None
    if view.phase == "declaring":
        return beginner.choose(view)
    candidates = candidates_for(view)
    if len(candidates) == 1:
        return candidates[0]
    seat = view.viewer
    know = knowledge(view)
    search: Playouts[MitigatiState, MitigatiCommand] = Playouts(
        world=lambda r: world(rules, view, know, r),
        playout=lambda state, command, r: playout_value(_after(state, command), seat),
    )
    playouts = budget.playouts if budget.playouts is not None else DEFAULT_PLAYOUTS
    return search.best(candidates, playouts, rng, budget.stop)

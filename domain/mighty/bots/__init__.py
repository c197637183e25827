"""Mighty's bots, every variant: ``POLICIES`` maps a level to its policy,
``policy(rules, view, seed, budget) -> command`` (``domain.bots``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from domain.bots import Budget, Policy
from domain.mighty.bots.beginner import beginner_policy
from domain.mighty.bots.expert import expert_policy
from domain.mighty.commands import Discard, HandCommand
from domain.mighty.rules import RuleSet
from domain.mighty.views import HandView
from domain.prng import Rng

MightyPolicy = Policy[RuleSet, HandView, HandCommand]


def random_policy(rules: RuleSet, view: HandView, seed: int, budget: Budget) -> HandCommand:
    """A legal command at random; at the discard step (whose sets the view does not list)
    random cards of the hand, and in mighty-3 random kitty cards to keep."""
    rng = Rng(seed)
    assert view.viewer is not None and view.hand is not None
    if view.legal:
        return view.legal[rng.below(len(view.legal))]
    spec = rules.spec
    take: tuple[str, ...] | None = None
    pool = list(view.hand)
    if spec.kitty_keep is not None:
        kitty = list(view.kitty or ())
        rng.shuffle(kitty)
        take = tuple(kitty[:spec.kitty_keep])
        pool.extend(take)
    rng.shuffle(pool)
    return Discard(seat=view.viewer, cards=tuple(pool[:spec.discard_count]), take=take)


POLICIES: Final[Mapping[str, MightyPolicy]] = {
    "random": random_policy,
    "beginner": beginner_policy,
    "expert": expert_policy,
}


def bot_policies() -> Mapping[str, MightyPolicy]:
    """Level -> policy, for the ``Game`` protocol's member that hands them out."""
    return POLICIES

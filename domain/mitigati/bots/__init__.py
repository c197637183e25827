"""Mitigati's bots: ``POLICIES`` maps a level to its policy,
``policy(rules, view, seed, budget) -> command`` (``domain.bots``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from domain.bots import Budget, Policy
from domain.mitigati.bots.beginner import beginner_policy
from domain.mitigati.bots.expert import expert_policy
from domain.mitigati.cards import is_honour
from domain.mitigati.commands import Bargain, Discard, MitigatiCommand
from domain.mitigati.rules import DISCARD_COUNT, RuleSet
from domain.mitigati.views import MitigatiView
from domain.prng import Rng

MitigatiPolicy = Policy[RuleSet, MitigatiView, MitigatiCommand]


def random_policy(rules: RuleSet, view: MitigatiView, seed: int, budget: Budget) -> MitigatiCommand:
    """A legal command at random: in bargaining a kind of command first (pass, continue,
    pay, sell), then one of that kind, else the 2 x 129 listed amounts would strike a
    bargain nearly every hand; at the discard step three random cards that are not honours."""
    rng = Rng(seed)
    assert view.viewer is not None and view.hand is not None
    legal = view.legal
    if not legal:
        pool = [c for c in view.hand if not is_honour(c)]
        rng.shuffle(pool)
        return Discard(seat=view.viewer, cards=tuple(pool[:DISCARD_COUNT]))
    if isinstance(legal[0], Bargain):
        kinds: dict[str, list[MitigatiCommand]] = {}
        for command in legal:
            assert isinstance(command, Bargain)
            kinds.setdefault(command.action, []).append(command)
        kind = list(kinds.values())[rng.below(len(kinds))]
        return kind[rng.below(len(kind))]
    return legal[rng.below(len(legal))]


POLICIES: Final[Mapping[str, MitigatiPolicy]] = {
    "random": random_policy,
    "beginner": beginner_policy,
    "expert": expert_policy,
}


def bot_policies() -> Mapping[str, MitigatiPolicy]:
    """Level -> policy, for the ``Game`` protocol's member that hands them out."""
    return POLICIES

"""What every game's bots share: the levels, the budget, and the search.

A bot is a pure function of a seat's view (what that seat may see, docs/rules/mighty.md §8),
the table's rule set (public), a seed (data, never a clock or a random source) and a
budget; it returns one of the seat's legal commands. Three levels:

- ``random``: a legal command at random (for Mitigati's bargaining, a kind of command
  first, so the 2 x 129 listed amounts do not strike a bargain every hand);
- ``beginner``: rules of thumb a sensible beginner follows, fast enough to play the
  other seats inside the expert's playouts;
- ``expert``: determinized search (flat Monte Carlo over sampled worlds). It samples
  deals of the unseen cards consistent with the view (``domain.sampling``), rebuilds a
  full hand state from each, plays every candidate command out to the end of the hand
  with beginners in every seat, and picks the command with the best average score.

The budget counts playouts; ``stop``, when given, is asked between playouts, so a caller
can cap the thinking by time without this package reading a clock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Final, Generic, Protocol, TypeVar

import msgspec

from domain.prng import Rng

LEVELS: Final = ("random", "beginner", "expert")  # every game's ``POLICIES`` has these keys

# A bot's display name: one list per level, at least as long as the largest table (8
# seats), so the bots of one level at a table never share a name. Shown beside the level
# (``Seat.bot``) by the clients: "Ada · beginner bot".
BOT_NAMES: Final[dict[str, tuple[str, ...]]] = {
    "random": ("Pip", "Dice", "Coin", "Whim", "Lotto", "Tumble", "Shuffle", "Fickle", "Chance", "Spinner"),
    "beginner": ("Ada", "Bo", "Cleo", "Dot", "Eli", "Fern", "Gus", "Hana", "Ike", "June"),
    "expert": ("Ace", "Sage", "Vega", "Orion", "Nova", "Atlas", "Rook", "Quill", "Lyra", "Kai"),
}


def bot_name(level: str, table_id: str, seat: int) -> str:
    """The name of the bot of ``level`` at ``seat`` of ``table_id``: the same wherever it
    is computed (no random source), and distinct from the names of the table's other bots
    of that level (consecutive seats take consecutive names from an offset the table's id
    gives). A level without a list is named after itself and the seat (a bot is one player
    per level and name: two seats of one table never share a name)."""
    names = BOT_NAMES.get(level)
    if not names:
        return f"{level} bot {seat + 1}"
    offset = int.from_bytes(hashlib.sha256(table_id.encode()).digest()[:4], "big")
    return names[(offset + seat) % len(names)]

C = TypeVar("C")
W = TypeVar("W")
R_contra = TypeVar("R_contra", contravariant=True)
V_contra = TypeVar("V_contra", contravariant=True)
C_co = TypeVar("C_co", covariant=True)


class Budget(msgspec.Struct, frozen=True, kw_only=True):
    """How hard the expert thinks: ``playouts`` per decision (None: the game's default,
    set so a decision stays within 300 ms at p99 on one core), and ``stop``, asked between
    playouts, for a caller that caps by time."""

    playouts: int | None = None
    stop: Callable[[], bool] | None = None


class Policy(Protocol[R_contra, V_contra, C_co]):
    """``policy(rules, view, seed, budget) -> command``: one of the view's legal commands."""

    def __call__(self, rules: R_contra, view: V_contra, seed: int, budget: Budget) -> C_co: ...


class Playouts(Generic[W, C]):
    """Flat Monte Carlo over determinizations: each round samples one world and plays
    every candidate out in it (the same world for all: common random numbers, so the
    comparison is between commands, not between deals)."""

    def __init__(self, world: Callable[[Rng], W], playout: Callable[[W, C, Rng], float]) -> None:
        self.world = world
        self.playout = playout

    def best(self, candidates: Sequence[C], playouts: int, rng: Rng,
             stop: Callable[[], bool] | None = None) -> C:
        """The candidate with the best mean, if it beats the first one (the beginner's
        choice) clearly: its mean paired difference more than ``MARGIN`` standard errors
        above zero. Few worlds are noisy; this keeps the search from trading a sound
        rule of thumb for a lucky draw."""
        if len(candidates) <= 1:
            return candidates[0]
        values: list[list[float]] = [[] for _ in candidates]
        spent = 0
        while spent + len(candidates) <= max(playouts, len(candidates)):
            if stop is not None and spent and stop():
                break
            world = self.world(rng)
            seed = rng.next()
            for i, candidate in enumerate(candidates):
                values[i].append(self.playout(world, candidate, Rng(seed)))
            spent += len(candidates)
        return candidates[_clear_winner(values)]


MARGIN: Final = 1.0


def _clear_winner(values: list[list[float]]) -> int:
    """The index of the best mean whose paired advantage over index 0 is clear, else 0."""
    rounds = len(values[0])
    means = [sum(v) / rounds for v in values]
    best = max(range(len(values)), key=lambda i: (means[i], -i))
    if best == 0 or rounds < 2:
        return best if rounds < 2 else 0
    diffs = [b - a for a, b in zip(values[0], values[best], strict=True)]
    mean = sum(diffs) / rounds
    variance = sum((d - mean) ** 2 for d in diffs) / (rounds - 1)
    return best if mean > MARGIN * (variance / rounds) ** 0.5 else 0

"""A small seeded pseudo-random generator for the bots (SplitMix64).

The domain reads no random source (docs/architecture.md, "Layers"): a bot receives its seed as data and
draws from this generator, so the same view and seed always give the same command, on
any machine. SplitMix64 is a few integer operations per draw and passes BigCrush; the
bots need speed and reproducibility, not secrecy.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1


class Rng:
    """SplitMix64: ``next()`` is a 64-bit integer; the rest are built on it."""

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK

    def next(self) -> int:
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A whole number in [0, n); the modulo bias is below 2**-40 for any n a bot uses."""
        return self.next() % n

    def random(self) -> float:
        """A float in [0, 1)."""
        return (self.next() >> 11) * (1.0 / (1 << 53))

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates, in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def fork(self) -> Rng:
        """An independent generator seeded from this one (for one playout)."""
        return Rng(self.next())

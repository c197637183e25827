"""Combinatorics both games' legality lists share: a discard step is a lazy sequence of
card sets, and its ``n``-th set is made by unranking, not by listing them all."""

from __future__ import annotations

from math import comb


def nth_combination(pool: tuple[str, ...], r: int, index: int) -> tuple[str, ...]:
    """``list(combinations(pool, r))[index]`` without making the list."""
    n = len(pool)
    c = comb(n, r)
    if not 0 <= index < c:
        raise IndexError("combination index out of range")
    result = []
    while r:
        c, n, r = c * r // n, n - 1, r - 1
        while index >= c:
            index -= c
            c, n = c * (n - r) // n, n - 1
        result.append(pool[-1 - n])
    return tuple(result)

"""Variants and rule sets (docs/rules/mighty.md §2-§7).

A ``RuleSet`` is data: the variant plus every rule option with its default. Its
fingerprint is recorded in the events so a stored hand says which rules judged it.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Any, Final, Literal

import msgspec

from domain.errors import RuleSetError
from domain.mighty.cards import RANKS, SUITS, Card


class Payout(msgspec.Struct, frozen=True):
    """Multipliers of ``b`` when the contract is made (docs/rules/mighty.md §7 last column)."""

    declarer: int
    friend: int
    defender: int
    alone_declarer: int
    alone_defender: int


class Variant(msgspec.Struct, frozen=True):
    name: str
    players: int
    deck: tuple[Card, ...]
    hand_size: int
    kitty_size: int
    min_bid: int
    max_bid: int
    base_offset: int  # b = C - base_offset
    max_friends: int  # 0: the declarer always plays alone
    payout: Payout
    default_score: str
    ripper_rank: str = "3"
    playable: bool = True  # False: rule set known, decider not built yet
    # mighty-3: the declarer keeps this many of the kitty cards and discards as many; the
    # others then take one of the rest each and discard one. None: the declarer takes
    # the whole kitty and discards as many cards as it had.
    kitty_keep: int | None = None
    packs: int = 1  # docs/rules/mighty.md §10: two packs, cards named AS#1, JK1..JK4

    @property
    def discard_count(self) -> int:
        return self.kitty_size if self.kitty_keep is None else self.kitty_keep


def _pack(minus: frozenset[str] = frozenset()) -> tuple[Card, ...]:
    return tuple(r + s for s in SUITS for r in RANKS if r + s not in minus) + ("JK",)


def _two_packs(minus: tuple[str, ...] = ()) -> tuple[Card, ...]:
    cards = [f"{r}{s}#{p}" for p in (1, 2) for s in SUITS for r in RANKS]
    for card in minus:
        cards.remove(card)
    return tuple(cards) + tuple(f"JK{i}" for i in range(1, 5))


_SHORT4: Final = frozenset({"2" + s for s in SUITS} | {"4" + s for s in SUITS} | {"3H", "3D"})
_SHORT3: Final = frozenset(r + s for s in SUITS for r in "23456")
_STD: Final = Payout(2, 1, 1, 4, 1)
_FOUR: Final = Payout(4, 2, 3, 9, 3)
_THREE: Final = Payout(2, 0, 1, 2, 1)  # mighty-3: the declarer always alone, +2b / -b
_LARGE_FRIENDS: Final = Payout(2, 1, 1, 4, 1)
# The -short variants score the penalty tally by default; under `fixed` or `pagat` they pay
# as the full variant with as many players, the only multipliers that sum to zero (§6).

VARIANTS: Final[dict[str, Variant]] = {
    v.name: v
    for v in (
        Variant("mighty-5", 5, _pack(), 10, 3, 13, 20, 12, 1, _STD, "fixed"),
        Variant("mighty-4", 4, _pack(frozenset({"2H", "2C"})), 12, 3, 13, 20, 12, 1, _FOUR, "fixed"),
        Variant("mighty-3", 3, _pack(), 16, 5, 10, 20, 9, 0, _THREE, "fixed", kitty_keep=3),
        Variant("mighty-4-short", 4, _pack(_SHORT4), 10, 3, 12, 20, 11, 1, _FOUR, "penalty"),
        Variant("mighty-3-short", 3, _pack(_SHORT3), 10, 3, 11, 20, 10, 0, _THREE, "penalty", "7"),
        Variant("mighty-6", 6, _two_packs(), 17, 6, 25, 40, 24, 2, _LARGE_FRIENDS, "penalty", packs=2),
        Variant("mighty-7", 7, _two_packs(("2C#1", "2H#1", "2C#2", "2H#2")), 14, 6, 25, 40, 24, 2, _LARGE_FRIENDS, "penalty", packs=2),
        Variant("mighty-8", 8, _two_packs(("2C#1", "2H#1", "2C#2", "2H#2", "2D#2", "2S#2")), 12, 6, 25, 40, 24, 2, _LARGE_FRIENDS, "penalty", packs=2),
    )
}

# name -> allowed values; the first is the default (docs/rules/mighty.md §2-§6).
OPTIONS: Final[dict[str, tuple[Any, ...]]] = {
    "next_dealer": ("friend", "left"),
    "first_bidder": ("dealer", "left_of_dealer", "previous_declarer"),
    "misdeal_claim": (False, True),
    "suit_ranks_break_ties": (False, True),
    "pass_is_final": (True, False),
    "kitty_shown": (True, False),
    "first_trick_friend_allowed": (True, False),
    "joker_call": ("on_ripper_lead", "declared"),
    "score": ("fixed", "pagat", "penalty"),
}


class RuleSet(msgspec.Struct, frozen=True, kw_only=True):
    variant: str = "mighty-5"
    next_dealer: Literal["friend", "left"] = "friend"
    first_bidder: Literal["dealer", "left_of_dealer", "previous_declarer"] = "dealer"
    misdeal_claim: bool = False
    suit_ranks_break_ties: bool = False
    pass_is_final: bool = True
    kitty_shown: bool = True
    first_trick_friend_allowed: bool = True
    joker_call: Literal["on_ripper_lead", "declared"] = "on_ripper_lead"
    score: Literal["fixed", "pagat", "penalty"] = "fixed"

    @property
    def spec(self) -> Variant:
        return VARIANTS[self.variant]

    def options(self) -> dict[str, Any]:
        """Every option, by its docs/rules/mighty.md name."""
        return {name: getattr(self, name) for name in OPTIONS}

    def fingerprint(self) -> str:
        """A stable digest of the variant and every option value."""
        return _fingerprint(self)


@lru_cache(maxsize=256)
def _fingerprint(rules: RuleSet) -> str:
    canonical = msgspec.json.encode({"variant": rules.variant, **rules.options()}, order="sorted")
    return hashlib.sha256(canonical).hexdigest()[:16]


def make_rules(variant: str = "mighty-5", options: dict[str, Any] | None = None) -> RuleSet:
    """Validate a variant name and option overrides; unknown names or values raise."""
    if not isinstance(variant, str) or variant not in VARIANTS:
        known = ", ".join(VARIANTS)
        raise RuleSetError("unknown_variant", f"Unknown variant {variant!r}; known: {known}.")
    options = dict(options or {})
    if not isinstance(options, dict):
        raise RuleSetError("bad_option", "Options must be an object of option names to values.")
    for name, value in options.items():
        allowed = OPTIONS.get(name)
        if allowed is None:
            raise RuleSetError("unknown_option", f"Unknown rule option {name!r}; known: {', '.join(OPTIONS)}.")
        if not any(value == a and type(value) is type(a) for a in allowed):
            shown = " | ".join(str(a).lower() if isinstance(a, bool) else a for a in allowed)
            raise RuleSetError("bad_option", f"Option {name!r} cannot be {value!r}; it takes {shown}.")
    if "score" not in options:
        options["score"] = VARIANTS[variant].default_score
    return RuleSet(variant=variant, **options)

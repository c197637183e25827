"""The Mitigati rule set (docs/rules/mitigati.md): fixed numbers, no options in this version.

The ``RuleSet`` is data recorded in the deal event, as Mighty's is; its fingerprint says
which rules judged a stored hand.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

import msgspec

from domain.errors import RuleSetError

NAME: Final = "mitigati"
PLAYERS: Final = 3
ROUNDS: Final = 5  # packets of five; the dealer's last packet is 8
PACKET: Final = 5
LAST_PACKET: Final = 8
SESSIONS: Final = 3  # after rounds 2, 3 and 4
DISCARD_COUNT: Final = 3
TRICKS: Final = 25
PAR: Final = 43


class RuleSet(msgspec.Struct, frozen=True, kw_only=True):
    variant: str = NAME

    def fingerprint(self) -> str:
        canonical = msgspec.json.encode({"variant": self.variant}, order="sorted")
        return hashlib.sha256(canonical).hexdigest()[:16]


def make_rules(options: dict[str, Any] | None = None) -> RuleSet:
    """§2: Mitigati has no options in this version; any named option is refused."""
    if options:
        name = next(iter(options))
        raise RuleSetError("unknown_option", f"Mitigati has no options; the file names {name!r}.")
    return RuleSet()


def right_of(seat: int) -> int:
    """§1: every Mitigati turn passes to the right, (s + 2) % 3."""
    return (seat + 2) % PLAYERS


def first_to_speak(dealer: int) -> int:
    """R, the dealer's right: speaks first, declares first, leads the first trick."""
    return right_of(dealer)


def packet_size(round_index: int, seat: int, dealer: int) -> int:
    return LAST_PACKET if round_index == ROUNDS - 1 and seat == dealer else PACKET

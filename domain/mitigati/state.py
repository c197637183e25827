"""A Mitigati hand as a union of phases (docs/architecture.md, "The domain"), each a frozen Struct.

``Bargaining`` → ``Discarding`` → ``Declaring`` → ``Playing`` → ``Finished``, or
``Abandoned`` when a bargain is struck (docs/rules/mitigati.md, "Bargaining").
"""

from __future__ import annotations

import msgspec

from domain.mitigati.events import Declaration, TrickWon
from domain.mitigati.rules import RuleSet

Packets = tuple[tuple[tuple[str, ...], ...], ...]


class _Hand(msgspec.Struct, frozen=True, kw_only=True):
    rules: RuleSet
    dealer: int
    hand_no: int
    packets: Packets  # the whole deal, secret until dealt (audit view only)
    rounds_dealt: int  # how many rounds of packets the seats hold
    hands: tuple[tuple[str, ...], ...]  # what each seat holds now


class Bargaining(_Hand, frozen=True, kw_only=True):
    session: int  # 1, 2 or 3
    to_act: int
    payer: int | None = None
    offer: int | None = None
    seller: int | None = None
    ask: int | None = None
    passes: int = 0  # passes in a row since the session began or the last offer
    history: tuple[tuple[int, str, int | None], ...] = ()  # this session: (seat, action, amount)

    @property
    def agreed(self) -> bool:
        """The offer equals the ask: the third player answers (§4)."""
        return self.offer is not None and self.offer == self.ask


class Discarding(_Hand, frozen=True, kw_only=True):
    pass


class _Discarded(_Hand, frozen=True, kw_only=True):
    discards: tuple[str, ...]
    declarations: tuple[Declaration, ...] = ()


class Declaring(_Discarded, frozen=True, kw_only=True):
    to_act: int
    declared: int = 0  # seats that have answered


class FoolRecord(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    trick: int
    to: int
    card: str | None = None
    paid_in: int | None = None


class _Played(_Discarded, frozen=True, kw_only=True):
    tricks: tuple[TrickWon, ...] = ()
    won: tuple[tuple[str, ...], ...]  # each seat's won cards, by trick then play order
    fool: FoolRecord | None = None


class Playing(_Played, frozen=True, kw_only=True):
    leader: int
    to_act: int
    trick: tuple[str, ...] = ()


class Finished(_Played, frozen=True, kw_only=True):
    points: tuple[int, ...]
    scores: tuple[int, ...]


class Abandoned(_Hand, frozen=True, kw_only=True):
    session: int
    payer: int
    seller: int
    amount: int
    scores: tuple[int, ...]


MitigatiState = Bargaining | Discarding | Declaring | Playing | Finished | Abandoned


def phase_name(state: MitigatiState) -> str:
    """§9: bargaining, discard, declaring, play, finished, abandoned."""
    names = {Bargaining: "bargaining", Discarding: "discard", Declaring: "declaring",
             Playing: "play", Finished: "finished", Abandoned: "abandoned"}
    return names[type(state)]


def to_act(state: MitigatiState) -> int | None:
    if isinstance(state, Bargaining | Declaring | Playing):
        return state.to_act
    if isinstance(state, Discarding):
        return state.dealer
    return None


def is_terminal(state: MitigatiState) -> bool:
    return isinstance(state, Finished | Abandoned)

"""The ``Game`` protocol: what the table, the codec, the audit, the projections and the
random players need of one game (docs/architecture.md, "Layers": one game = one decider).

Nothing outside a game's own package (``domain/mighty/``, ``domain/mitigati/``) names
its modules but ``domain/registry.py``, which lists the games. Everything that differs
per game is a member here, so the table aggregate and everything above it work for any
game without naming one or testing for its types.

The protocol is generic over the game's rule set ``R``, hand state ``S``, seat command
``C``, hand event ``E``, view ``V`` and table ledger ``L``: each game implements
``Game[its types]``, and the code that holds "some game" (``Game[Any, ...]``, the
registry's entries) gets back exactly what it gave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

import msgspec

from domain.bots import Policy
from domain.presentation import Presentation

if TYPE_CHECKING:
    from typing import Self

    from domain.handfiles import HandFileRun


class Rules(Protocol):
    """A rule set, as the table and its readers see it."""

    @property
    def variant(self) -> str: ...

    def fingerprint(self) -> str: ...


class Hand(Protocol):
    """A hand state of any phase."""

    @property
    def hand_no(self) -> int: ...


class SeatCommand(Protocol):
    """A command a seat sends to the hand being played."""

    @property
    def seat(self) -> int: ...


class LedgerLine(Protocol):
    """One hand's line in a table's ledger: who sat where and what each seat scored."""

    @property
    def hand_no(self) -> int: ...  # numbered from 0, as the events number hands

    @property
    def players(self) -> tuple[str | None, ...]: ...

    @property
    def scores(self) -> tuple[int, ...]: ...

    def declared_by(self, seat: int) -> bool:
        """``seat`` declared this hand's contract (a game without contracts: never)."""
        ...

    def made_by(self, seat: int) -> bool:
        """``seat`` declared this hand's contract and made it."""
        ...

    def sides(self) -> tuple[tuple[int, ...], ...]:
        """The seats as they played this hand, side by side (the side that declared first,
        when one did), for the ratings (docs/ratings.md); ``()`` when the hand was not
        played out (nothing to rate)."""
        ...


class TableLedger(Protocol):
    """A table's score ledger document, of its game's shape (docs/rules/mighty.md §6)."""

    @property
    def table_id(self) -> str: ...

    @property
    def variant(self) -> str | None: ...

    @property
    def seats(self) -> tuple[str | None, ...]: ...

    @property
    def closed(self) -> bool: ...

    @property
    def hands(self) -> Sequence[LedgerLine]: ...

    @property
    def totals(self) -> tuple[int, ...]: ...  # every seat's total after the last line

    def seated(self, version: int, seats: tuple[str | None, ...]) -> Self:
        """The ledger after a player took or left a seat."""
        ...

    def closed_at(self, version: int) -> Self:
        """The ledger after its table closed."""
        ...


class TableCreatedEvent(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """The base of every game's ``TableCreated`` event: each game's own tag and rule-set
    type (msgspec tells two untagged rule-set shapes apart by no field).

    The fields are declared by each subclass, not here: msgspec encodes a class's fields
    in order, base first, and the stored events hold ``rules`` between ``table_id`` and
    ``rules_fingerprint``. The type checker is told what every subclass has."""

    v: int = 1

    if TYPE_CHECKING:
        @property
        def table_id(self) -> str: ...
        @property
        def rules(self) -> Rules: ...
        @property
        def rules_fingerprint(self) -> str: ...
        @property
        def name(self) -> str: ...
        @property
        def created_by(self) -> str | None: ...
        @property
        def hands(self) -> int: ...  # the match: 0 (open-ended) or its length in hands
        @property
        def turn_seconds(self) -> int: ...
        @property
        def bots(self) -> dict[str, str]: ...  # seat (as a string) -> bot level
        @property
        def created(self) -> str: ...  # ISO 8601 UTC, given as data by the service
        @property
        def private(self) -> bool | msgspec.UnsetType: ...  # UNSET: a public table
        @property
        def invite_hash(self) -> str | msgspec.UnsetType: ...  # a private table's invite code's sha256
        @property
        def rated(self) -> bool | msgspec.UnsetType: ...  # UNSET: rated; False: changes no rating
        @property
        def min_reputation(self) -> int | msgspec.UnsetType: ...  # UNSET: no reputation needed
        @property
        def hints(self) -> bool | msgspec.UnsetType: ...  # UNSET: no hints; True: a seat may ask


class DealProof(NamedTuple):
    """A deal event's public commitment and its secret salt (docs/rules/mighty.md §2)."""

    hand_no: int
    commitment: str | None
    salt: str | None


class HandEnding(NamedTuple):
    """What the last event of a hand (one of ``Game.ends_hand``) says of it: played out
    and scored (``finished``), or ended without being played out (passed out, thrown in,
    bargained away), with the scores it gave when it gave any."""

    finished: bool
    scores: tuple[int, ...] | None


class Settlement(NamedTuple):
    """What a hand's result does to its table: scores join the totals, the deal passes."""

    scores: tuple[int, ...]
    dealer: int
    declarer: int | None  # the previous declarer the next deal may need (Mighty's §2 option)


R = TypeVar("R", bound=Rules)
S = TypeVar("S", bound=Hand)
C = TypeVar("C", bound=SeatCommand)
E = TypeVar("E", bound=msgspec.Struct)
V = TypeVar("V", bound=msgspec.Struct)
L = TypeVar("L", bound=TableLedger)
# A part of the protocol that only takes one of these (never gives it back) is
# contravariant in it; ``Game``, which both takes and gives each, stays invariant.
R_in = TypeVar("R_in", bound=Rules, contravariant=True)
S_in = TypeVar("S_in", bound=Hand, contravariant=True)
C_in = TypeVar("C_in", bound=SeatCommand, contravariant=True)
E_in = TypeVar("E_in", bound=msgspec.Struct, contravariant=True)
V_in = TypeVar("V_in", bound=msgspec.Struct, contravariant=True)


class RuleBook(Protocol[R]):
    """The rule sets of a game and its tables: what the table aggregate, the lobby and the
    audit ask to make, name and list a rule set (docs/architecture.md, "Games")."""

    @property
    def name(self) -> str: ...

    @property
    def rules_type(self) -> type[R]: ...

    @property
    def created_type(self) -> type[TableCreatedEvent]:
        """Its ``TableCreated`` event."""
        ...

    @property
    def variants(self) -> tuple[str, ...]:
        """Every name ``CreateTable`` takes for this game (Mighty's rule sets; Mitigati's own name)."""
        ...

    def make_rules(self, variant: str, options: dict[str, Any]) -> R: ...

    def players(self, rules: R) -> int: ...

    def deck(self, rules: R) -> tuple[str, ...]: ...

    def created(self, table_id: str, rules: R, name: str, created_by: str | None) -> TableCreatedEvent:
        """The event that creates a table of this game."""
        ...

    def table_options(self, rules: R) -> dict[str, Any]:
        """The ``CreateTable`` options that make ``rules`` again."""
        ...

    def directory_fields(self, rules: R) -> dict[str, Any]:
        """What a lobby's directory entry shows of the rule set."""
        ...

    def directory_rules(self, fields: dict[str, Any]) -> R | None:
        """The rule set whose ``directory_fields`` are ``fields`` (a lobby entry's), or
        None when they are another game's."""
        ...


class Decider(Protocol[R_in, S, C, E]):
    """The hand decider (docs/architecture.md, "Layers"; the game's ``decider.py``): the
    deal, ``decide``, ``evolve``, ``is_terminal``, and what the table asks of a hand's
    turn and end."""

    @property
    def deal_type(self) -> type[E]:
        """The event that starts a hand."""
        ...

    @property
    def hand_events(self) -> tuple[type[E], ...]:
        """For isinstance: every event of a hand of this game."""
        ...

    @property
    def command_types(self) -> tuple[type[C], ...]:
        """Every command a seat sends to a hand of this game."""
        ...

    @property
    def command_union(self) -> Any:
        """The tagged union of ``command_types``, for msgspec."""
        ...

    @property
    def ends_hand(self) -> tuple[type[E], ...]:
        """For isinstance: the last event of a hand (its deal is then revealed)."""
        ...

    @property
    def scores_hand(self) -> tuple[type[E], ...]:
        """For isinstance: the hand endings a match counts (a redealt deal is not one)."""
        ...

    def deal(self, rules: R_in, order: tuple[str, ...], *, dealer: int, hand_no: int,
             previous_declarer: int | None, commitment: str, salt: str) -> E:
        """The event that starts the next hand, dealt from ``order`` (already checked to
        be the deck), with the deal's commitment and its (secret) salt."""
        ...

    def deal_proof(self, dealt: E) -> DealProof: ...

    def hand_order(self, hand: S) -> tuple[str, ...]:
        """The card order the hand being played was dealt from."""
        ...

    def decide(self, hand: S, command: C) -> Sequence[E]: ...

    def evolve(self, hand: S | None, event: E) -> S: ...

    def is_terminal(self, hand: S) -> bool: ...

    def redealt(self, hand: S) -> bool:
        """The hand ended without being played out (passed out, thrown in, abandoned)."""
        ...

    def hand_ending(self, event: E) -> HandEnding:
        """What a hand's last event (one of ``ends_hand``) says of the hand."""
        ...

    def settle(self, rules: R_in, hand: S, event: E, *, dealer: int, seats: int) -> Settlement | None:
        """What the hand event just applied (``hand`` is the state after it) does to the
        table: None unless it is the hand's result."""
        ...

    def to_act(self, hand: S) -> int | None: ...

    def legal_commands(self, hand: S, seat: int) -> Sequence[C]: ...


class Views(Protocol[S_in, V]):
    """What each reader sees of a hand (the game's ``views.py``): the projections' views."""

    @property
    def view_type(self) -> type[V]:
        """A seat's view of a hand (``seat_view``'s type): what a bot worker decodes a
        stored seat view into, so a bot reads what the seat sees and nothing more."""
        ...

    def all_views(self, hand: S_in) -> tuple[Sequence[V], V]: ...

    def seat_view(self, hand: S_in, seat: int) -> V: ...

    def spectator_view(self, hand: S_in) -> V: ...

    def audit_view(self, hand: S_in, *, cut_short: bool = False) -> V: ...

    def closed_view(self, view: V) -> V:
        """A view of a hand whose table closed mid-hand: nobody is to act any more."""
        ...


class Audit(Protocol[C, E_in]):
    """What the audit needs (the game's ``handfile.py``): the command an event records, the
    deal's order, hand files written and read, what ``mighty log`` hides."""

    def deal_order(self, dealt: E_in) -> tuple[str, ...]:
        """The card order a deal event was cut from: what ``DealRevealed`` shows."""
        ...

    def command_of(self, events: Sequence[E_in]) -> C | None:
        """The seat command that appended ``events`` (one command's hand events, in order)
        records, or None (derived events, the deal)."""
        ...

    def hand_file(self, dealt: E_in, commands: Sequence[C]) -> dict[str, Any]:
        """The hand file of a stored hand (for ``mighty export``)."""
        ...

    def log_fields(self, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
        """An event's fields as ``mighty log`` prints them: what the hand keeps secret
        (docs/rules/mighty.md §8) shown as a count."""
        ...

    def read_hand_file(self, data: bytes) -> HandFileRun:
        """Parse and check a hand file of this game (``HandFileError`` when broken)."""
        ...


class Ledgers(Protocol[R_in, E_in, L]):
    """The score ledger of a table of this game (the game's ``ledger.py``)."""

    def new_ledger(self, table_id: str, version: int, rules: R_in) -> L: ...

    def fold_ledger(self, ledger: L, version: int, event: E_in) -> L:
        """The ledger after one of this game's hand events; the same object if unchanged."""
        ...

    @property
    def ledger_type(self) -> type[L]:
        """The table's ledger (``new_ledger``'s type): what a stored ledger document is
        decoded into (projections/ledger.py, in whichever encoding it was stored)."""
        ...


class Players(Protocol[R_in, C, V_in]):
    """The game's bots and random players (the game's ``bots/``)."""

    def bots(self) -> Mapping[str, Policy[R_in, V_in, C]]:
        """Bot level (``random``, ``beginner``, ``expert``; docs/bots.md) -> its policy:
        ``policy(rules, seat_view, seed, budget)`` -> one of the view's legal commands."""
        ...

    def command_kinds(self, legal: Sequence[C]) -> Sequence[Sequence[C]]:
        """The legal commands in the kinds a random player picks among first, then one of
        the kind (a uniform pick over a list of many amounts would always bargain)."""
        ...


class Shown(Protocol[S_in, C_in, V_in]):
    """How a client that knows no game is shown this one (the game's ``presentation.py``)."""

    @property
    def presentation(self) -> Presentation[S_in, C_in, V_in]:
        """How a client is shown the game: its catalogue, labels, hand order
        (``domain/presentation.py``; the game package's ``presentation.py``)."""
        ...


class Game(RuleBook[R], Decider[R, S, C, E], Views[S, V], Audit[C, E], Ledgers[R, E, L],
           Players[R, C, V], Shown[S, C, V], Protocol[R, S, C, E, V, L]):
    """One game's rules as everything above it needs them: the small protocols above, each
    one part of the game's package (docs/architecture.md, "Games"); code that needs one part
    may type its argument by that part. A hand, a command, an event passed to a game are
    always its own: callers dispatch on the table's rule set (``registry.game_of``) or on
    the event's type (``registry.game_of_event``)."""


AnyGame = Game[Any, Any, Any, Any, Any, Any]

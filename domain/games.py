"""The games a table can run (DESIGN.md §2: one game = one decider), behind one protocol.

The table aggregate (``domain/table.py``) names no game's modules: it asks ``game_of(rules)``
or ``game_named(variant)`` for a ``Game`` and calls it to make the rule set, deal from a
card order, decide and evolve the hand inside, say when a hand has ended, settle the
table after it (scores, the next dealer) and reveal its card order. The views projection
and the audit ask the same object for views and for the order a deal was cut from.

Two implementations: ``MIGHTY`` (``domain/mighty/``, every variant of
mighty.md) and ``MITIGATI`` (``domain/mitigati/``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from msgspec.structs import replace

from domain.errors import TableError
from domain.mighty import hand as mighty_hand
from domain.mighty import legal as mighty_legal
from domain.mighty import state as mighty_state
from domain.mighty import views as mighty_views
from domain.mighty.commands import HandCommand
from domain.mighty.events import HandDealt, HandEvent, HandPassedOut, HandScored, MisdealClaimed
from domain.mighty.rules import RuleSet, make_rules
from domain.mighty.state import Finished, HandState
from domain.mighty.views import HandView
from domain.mitigati import decider as mitigati_decider
from domain.mitigati import legal as mitigati_legal
from domain.mitigati import state as mitigati_state
from domain.mitigati import views as mitigati_views
from domain.mitigati.cards import DECK as MITIGATI_DECK
from domain.mitigati.commands import MitigatiCommand
from domain.mitigati.events import DealAbandoned, MitigatiEvent
from domain.mitigati.events import HandDealt as MitigatiHandDealt
from domain.mitigati.events import HandScored as MitigatiHandScored
from domain.mitigati.rules import NAME as MITIGATI
from domain.mitigati.rules import PLAYERS as MITIGATI_PLAYERS
from domain.mitigati.rules import RuleSet as MitigatiRuleSet
from domain.mitigati.rules import make_rules as mitigati_rules
from domain.mitigati.rules import right_of
from domain.mitigati.state import MitigatiState
from domain.mitigati.views import MitigatiView

if TYPE_CHECKING:
    from domain.table import TableState

AnyRules = RuleSet | MitigatiRuleSet
AnyHand = HandState | MitigatiState
AnyHandEvent = HandEvent | MitigatiEvent
AnyHandCommand = HandCommand | MitigatiCommand
AnyDealt = HandDealt | MitigatiHandDealt
AnyView = HandView | MitigatiView


class Game(Protocol):
    """One game's rules as the table needs them. ``hand`` is always a state of this game,
    ``event`` one of its events: the table dispatches on the rule set it was created with."""

    name: str
    hand_events: tuple[type, ...]  # for isinstance: every event of a hand of this game
    command_types: tuple[type, ...]  # every command a seat sends to a hand of this game

    def make_rules(self, variant: str, options: dict[str, Any]) -> AnyRules: ...

    def players(self, rules: AnyRules) -> int: ...

    def deck(self, rules: AnyRules) -> tuple[str, ...]: ...

    def deal(self, table: TableState, order: tuple[str, ...], commitment: str, salt: str) -> AnyDealt:
        """The event that starts the next hand, dealt from ``order`` (already checked to
        be the deck), with the deal's commitment and its (secret) salt."""
        ...

    def deal_order(self, dealt: AnyDealt) -> tuple[str, ...]:
        """The card order a deal event was cut from: what ``DealRevealed`` shows."""
        ...

    def hand_order(self, hand: AnyHand) -> tuple[str, ...]: ...

    def decide(self, hand: AnyHand, command: AnyHandCommand) -> list[AnyHandEvent]: ...

    def evolve(self, hand: AnyHand | None, event: AnyHandEvent) -> AnyHand: ...

    def is_terminal(self, hand: AnyHand) -> bool: ...

    def ends_hand(self, event: object) -> bool:
        """The last event of a hand (the deal is then revealed)."""
        ...

    def settle(self, table: TableState, hand: AnyHand, event: AnyHandEvent) -> TableState:
        """The table after a hand event has been applied to ``hand``: scores, dealer."""
        ...

    def to_act(self, hand: AnyHand) -> int | None: ...

    def legal_commands(self, hand: AnyHand, seat: int) -> Sequence[AnyHandCommand]: ...

    def all_views(self, hand: AnyHand) -> tuple[list[AnyView], AnyView]: ...

    def seat_view(self, hand: AnyHand, seat: int) -> AnyView: ...

    def spectator_view(self, hand: AnyHand) -> AnyView: ...

    def audit_view(self, hand: AnyHand, *, cut_short: bool = False) -> AnyView: ...


class _Mighty:
    """Mighty, every variant: exactly what ``domain/table.py`` did before it had games."""

    name = "mighty"
    hand_events: tuple[type, ...] = HandEvent.__args__
    command_types: tuple[type, ...] = HandCommand.__args__
    _ends: Final = (HandScored, HandPassedOut, MisdealClaimed)

    def make_rules(self, variant: str, options: dict[str, Any]) -> AnyRules:
        rules = make_rules(variant, options)
        if not rules.spec.playable:
            raise TableError("variant_not_playable", f"{rules.variant} cannot be played here yet.")
        return rules

    def players(self, rules: AnyRules) -> int:
        assert isinstance(rules, RuleSet)
        return rules.spec.players

    def deck(self, rules: AnyRules) -> tuple[str, ...]:
        assert isinstance(rules, RuleSet)
        return rules.spec.deck

    def deal(self, table: TableState, order: tuple[str, ...], commitment: str, salt: str) -> AnyDealt:
        rules = table.rules
        assert isinstance(rules, RuleSet)
        spec = rules.spec
        size, n = spec.hand_size, spec.players
        hands = tuple(order[i * size:(i + 1) * size] for i in range(n))
        first = table.dealer
        if rules.first_bidder == "left_of_dealer":
            first = (table.dealer + 1) % n
        elif rules.first_bidder == "previous_declarer" and table.previous_declarer is not None:
            first = table.previous_declarer
        dealt = mighty_hand.deal_event(
            rules, dealer=table.dealer, hands=hands, kitty=order[n * size:],
            first_bidder=first, hand_no=table.hand_no, commitment=commitment,
        )
        return replace(dealt, salt=salt)

    def deal_order(self, dealt: AnyDealt) -> tuple[str, ...]:
        assert isinstance(dealt, HandDealt)
        return tuple(c for h in dealt.hands for c in h) + dealt.kitty

    def hand_order(self, hand: AnyHand) -> tuple[str, ...]:
        return tuple(c for h in hand.dealt for c in h) + hand.kitty  # type: ignore[union-attr]

    def decide(self, hand: AnyHand, command: AnyHandCommand) -> list[AnyHandEvent]:
        return list(mighty_hand.decide(hand, command))  # type: ignore[arg-type]

    def evolve(self, hand: AnyHand | None, event: AnyHandEvent) -> AnyHand:
        return mighty_hand.evolve(hand, event)  # type: ignore[arg-type]

    def is_terminal(self, hand: AnyHand) -> bool:
        return mighty_hand.is_terminal(hand)  # type: ignore[arg-type]

    def ends_hand(self, event: object) -> bool:
        return isinstance(event, self._ends)

    def settle(self, table: TableState, hand: AnyHand, event: AnyHandEvent) -> TableState:
        if not isinstance(event, HandScored):
            return replace(table, hand=hand)
        rules = table.rules
        assert isinstance(rules, RuleSet)
        n = len(table.seats)
        dealer = (table.dealer + 1) % n
        if rules.next_dealer == "friend":
            # two packs: HandScored has no single friend; the lowest friend seat deals
            friends = hand.friends if isinstance(hand, Finished) else ()
            friend = event.friend if event.friend is not None else next(iter(friends), None)
            dealer = friend if friend is not None else event.declarer
        totals = tuple(t + s for t, s in zip(table.totals, event.scores, strict=True))
        return replace(table, hand=hand, dealer=dealer, previous_declarer=event.declarer,
                       totals=totals, hands_scored=table.hands_scored + 1)

    def to_act(self, hand: AnyHand) -> int | None:
        return mighty_state.to_act(hand)  # type: ignore[arg-type]

    def legal_commands(self, hand: AnyHand, seat: int) -> Sequence[AnyHandCommand]:
        return mighty_legal.legal_commands(hand, seat)  # type: ignore[arg-type]

    def all_views(self, hand: AnyHand) -> tuple[list[AnyView], AnyView]:
        seats, spectator = mighty_views.all_views(hand)  # type: ignore[arg-type]
        return list(seats), spectator

    def seat_view(self, hand: AnyHand, seat: int) -> AnyView:
        return mighty_views.seat_view(hand, seat)  # type: ignore[arg-type]

    def spectator_view(self, hand: AnyHand) -> AnyView:
        return mighty_views.spectator_view(hand)  # type: ignore[arg-type]

    def audit_view(self, hand: AnyHand, *, cut_short: bool = False) -> AnyView:
        return mighty_views.audit_view(hand, cut_short=cut_short)  # type: ignore[arg-type]


class _Mitigati:
    """Mitigati (rules/mitigati.md): three seats, the deal passing to the right."""

    name = MITIGATI
    hand_events: tuple[type, ...] = MitigatiEvent.__args__
    command_types: tuple[type, ...] = MitigatiCommand.__args__
    _ends: Final = (MitigatiHandScored, DealAbandoned)

    def make_rules(self, variant: str, options: dict[str, Any]) -> AnyRules:
        return mitigati_rules(options)

    def players(self, rules: AnyRules) -> int:
        return MITIGATI_PLAYERS

    def deck(self, rules: AnyRules) -> tuple[str, ...]:
        return MITIGATI_DECK

    def deal(self, table: TableState, order: tuple[str, ...], commitment: str, salt: str) -> AnyDealt:
        rules = table.rules
        assert isinstance(rules, MitigatiRuleSet)
        packets = mitigati_decider.packets_from_order(order, table.dealer)
        dealt = mitigati_decider.deal_event(rules, dealer=table.dealer, packets=packets,
                                            hand_no=table.hand_no)
        return replace(dealt, commitment=commitment, salt=salt)

    def deal_order(self, dealt: AnyDealt) -> tuple[str, ...]:
        assert isinstance(dealt, MitigatiHandDealt)
        return mitigati_decider.deal_order(dealt.packets)

    def hand_order(self, hand: AnyHand) -> tuple[str, ...]:
        return mitigati_decider.deal_order(hand.packets)  # type: ignore[union-attr]

    def decide(self, hand: AnyHand, command: AnyHandCommand) -> list[AnyHandEvent]:
        return list(mitigati_decider.decide(hand, command))  # type: ignore[arg-type]

    def evolve(self, hand: AnyHand | None, event: AnyHandEvent) -> AnyHand:
        return mitigati_decider.evolve(hand, event)  # type: ignore[arg-type]

    def is_terminal(self, hand: AnyHand) -> bool:
        return mitigati_state.is_terminal(hand)  # type: ignore[arg-type]

    def ends_hand(self, event: object) -> bool:
        return isinstance(event, self._ends)

    def settle(self, table: TableState, hand: AnyHand, event: AnyHandEvent) -> TableState:
        """A played hand and an abandoned deal both count as a hand of the match: their
        scores (card points and declarations, or the bargain's payment) join the totals and
        the deal passes to the right (mitigati.md; mitigati-hand-file.md §4)."""
        if not isinstance(event, MitigatiHandScored | DealAbandoned):
            return replace(table, hand=hand)
        totals = tuple(t + s for t, s in zip(table.totals, event.scores, strict=True))
        return replace(table, hand=hand, dealer=right_of(table.dealer), totals=totals,
                       hands_scored=table.hands_scored + 1)

    def to_act(self, hand: AnyHand) -> int | None:
        return mitigati_state.to_act(hand)  # type: ignore[arg-type]

    def legal_commands(self, hand: AnyHand, seat: int) -> Sequence[AnyHandCommand]:
        return mitigati_legal.legal_commands(hand, seat)  # type: ignore[arg-type]

    def all_views(self, hand: AnyHand) -> tuple[list[AnyView], AnyView]:
        seats = [mitigati_views.seat_view(hand, s) for s in range(MITIGATI_PLAYERS)]  # type: ignore[arg-type]
        return list(seats), mitigati_views.spectator_view(hand)  # type: ignore[arg-type]

    def seat_view(self, hand: AnyHand, seat: int) -> AnyView:
        return mitigati_views.seat_view(hand, seat)  # type: ignore[arg-type]

    def spectator_view(self, hand: AnyHand) -> AnyView:
        return mitigati_views.spectator_view(hand)  # type: ignore[arg-type]

    def audit_view(self, hand: AnyHand, *, cut_short: bool = False) -> AnyView:
        return mitigati_views.audit_view(hand, cut_short=cut_short)  # type: ignore[arg-type]


MIGHTY: Final[Game] = _Mighty()
MITIGATI_GAME: Final[Game] = _Mitigati()
GAMES: Final[dict[str, Game]] = {MIGHTY.name: MIGHTY, MITIGATI_GAME.name: MITIGATI_GAME}
_BY_RULES: Final[dict[type, Game]] = {RuleSet: MIGHTY, MitigatiRuleSet: MITIGATI_GAME}


def game_of(rules: AnyRules) -> Game:
    """The game a rule set belongs to."""
    return _BY_RULES[type(rules)]


def game_named(variant: str) -> Game:
    """The game of a ``CreateTable`` variant: ``mitigati``, else one of Mighty's."""
    return MITIGATI_GAME if variant == MITIGATI else MIGHTY

"""Mitigati (docs/rules/mitigati.md) as a ``Game`` (``domain/games.py``): three seats, the
deal passing to the right. ``domain/registry.py`` lists it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, get_args

import msgspec
from msgspec.structs import replace

from domain.bots import Policy
from domain.games import DealProof, Game, HandEnding, Settlement, TableCreatedEvent
from domain.handfiles import HandFileRun, Replayed
from domain.mitigati import decider, handfile, ledger
from domain.mitigati import legal as mitigati_legal
from domain.mitigati import presentation as mitigati_presentation
from domain.mitigati import state as mitigati_state
from domain.mitigati import views as mitigati_views
from domain.mitigati.bots import bot_policies
from domain.mitigati.cards import DECK
from domain.mitigati.commands import (
    COMBINATIONS,
    Action,
    Bargain,
    Declare,
    Discard,
    MitigatiCommand,
    Play,
)
from domain.mitigati.events import (
    Bargained,
    CardPlayed,
    CardsDiscarded,
    DealAbandoned,
    Declared,
    HandDealt,
    HandScored,
    MitigatiEvent,
)
from domain.mitigati.rules import NAME, PLAYERS, RuleSet, make_rules, right_of
from domain.mitigati.state import Abandoned, MitigatiState
from domain.mitigati.views import MitigatiView


class TableCreated(TableCreatedEvent, frozen=True, tag="mitigati_table_created"):
    """``TableCreated`` for a Mitigati table: its own tag, its own rule set."""

    table_id: str
    rules: RuleSet
    rules_fingerprint: str
    name: str = ""
    created_by: str | None = None
    hands: int = 0  # the match: CreateTable's fields of the same names (domain/table.py)
    turn_seconds: int = 0
    bots: dict[str, str] = {}
    created: str = ""
    # a private table (domain/table.py, CreateTable): UNSET, left out, on a public one
    private: bool | msgspec.UnsetType = msgspec.UNSET
    invite_hash: str | msgspec.UnsetType = msgspec.UNSET
    # an unrated table (domain/table.py, CreateTable; docs/ratings.md): False; UNSET, left
    # out, on a rated one
    rated: bool | msgspec.UnsetType = msgspec.UNSET
    # the reputation a seat needs, percent (CreateTable.min_reputation): UNSET, left out, for none
    min_reputation: int | msgspec.UnsetType = msgspec.UNSET
    # learners' hints allowed (CreateTable.hints; an unrated table only): UNSET, left out, for none
    hints: bool | msgspec.UnsetType = msgspec.UNSET


# `mighty log` never prints the deal nor the dealer's discard (docs/rules/mitigati.md, as docs/rules/mighty.md §8).
_SECRET_CARDS: Final[dict[str, str]] = {"mitigati_hand_dealt": "packets", "mitigati_cards_discarded": "cards"}
_ACTIONS: Final[dict[str, Action]] = {"pass": "pass", "pay": "pay", "sell": "sell", "continue": "continue"}


@dataclass(frozen=True)
class _HandFileRun:
    hand_file: handfile.HandFile
    rules: RuleSet

    @property
    def variant(self) -> str:
        return self.rules.variant

    @property
    def players(self) -> int:
        return PLAYERS

    def replay(self, as_seat: int | None, view: Callable[[Any], Any] | None = None) -> Replayed:
        outcome = handfile.replay(self.hand_file, self.rules, as_seat=as_seat, view=view)
        return Replayed(outcome.steps, outcome.rejected, lambda: handfile.output_of(outcome))


def _all_views(hand: MitigatiState) -> tuple[list[MitigatiView], MitigatiView]:
    return [mitigati_views.seat_view(hand, s) for s in range(PLAYERS)], mitigati_views.spectator_view(hand)


class MitigatiGame:
    """Mitigati at a table: a hand played or a deal abandoned in the bargain each count
    as a hand of the match (docs/rules/mitigati.md, "Bargaining")."""

    name: Final = NAME
    variants: tuple[str, ...] = (NAME,)  # one rule set, named after the game
    rules_type = RuleSet
    created_type = TableCreated
    deal_type = HandDealt
    hand_events: tuple[type[MitigatiEvent], ...] = get_args(MitigatiEvent)
    command_types: tuple[type[MitigatiCommand], ...] = get_args(MitigatiCommand)
    ends_hand: tuple[type[MitigatiEvent], ...] = (HandScored, DealAbandoned)
    scores_hand: tuple[type[MitigatiEvent], ...] = (HandScored, DealAbandoned)  # both pay (§4)
    view_type = MitigatiView
    presentation = mitigati_presentation.PRESENTATION
    command_union: Any = MitigatiCommand

    decide = staticmethod(decider.decide)
    evolve = staticmethod(decider.evolve)
    is_terminal = staticmethod(mitigati_state.is_terminal)
    to_act = staticmethod(mitigati_state.to_act)
    legal_commands = staticmethod(mitigati_legal.legal_commands)
    all_views = staticmethod(_all_views)
    seat_view = staticmethod(mitigati_views.seat_view)
    spectator_view = staticmethod(mitigati_views.spectator_view)
    audit_view = staticmethod(mitigati_views.audit_view)

    # ------------------------------------------------------------ the table

    def make_rules(self, variant: str, options: dict[str, Any]) -> RuleSet:
        return make_rules(options)

    def players(self, rules: RuleSet) -> int:
        return PLAYERS

    def deck(self, rules: RuleSet) -> tuple[str, ...]:
        return DECK

    def created(self, table_id: str, rules: RuleSet, name: str, created_by: str | None) -> TableCreated:
        return TableCreated(table_id=table_id, rules=rules, rules_fingerprint=rules.fingerprint(),
                            name=name, created_by=created_by)

    def deal(self, rules: RuleSet, order: tuple[str, ...], *, dealer: int, hand_no: int,
             previous_declarer: int | None, commitment: str, salt: str) -> MitigatiEvent:
        """§2: the order cut into packets, round by round."""
        packets = decider.packets_from_order(order, dealer)
        dealt = decider.deal_event(rules, dealer=dealer, packets=packets, hand_no=hand_no)
        return replace(dealt, commitment=commitment, salt=salt)

    def deal_proof(self, dealt: MitigatiEvent) -> DealProof:
        assert isinstance(dealt, HandDealt)
        commitment = dealt.commitment if isinstance(dealt.commitment, str) else None
        salt = dealt.salt if isinstance(dealt.salt, str) else None
        return DealProof(dealt.hand_no, commitment, salt)

    def deal_order(self, dealt: MitigatiEvent) -> tuple[str, ...]:
        assert isinstance(dealt, HandDealt)
        return decider.deal_order(dealt.packets)

    def hand_order(self, hand: MitigatiState) -> tuple[str, ...]:
        return decider.deal_order(hand.packets)

    def redealt(self, hand: MitigatiState) -> bool:
        return isinstance(hand, Abandoned)

    def hand_ending(self, event: MitigatiEvent) -> HandEnding:
        # a deal bargained away is not played out, but its payment scores (§4)
        if isinstance(event, HandScored):
            return HandEnding(True, event.scores)
        if isinstance(event, DealAbandoned):
            return HandEnding(False, event.scores)
        return HandEnding(False, None)

    def settle(self, rules: RuleSet, hand: MitigatiState, event: MitigatiEvent, *,
               dealer: int, seats: int) -> Settlement | None:
        """A played hand and an abandoned deal both count as a hand of the match: their
        scores (card points and declarations, or the bargain's payment) join the totals and
        the deal passes to the right (docs/rules/mitigati.md, "Bargaining")."""
        if not isinstance(event, HandScored | DealAbandoned):
            return None
        return Settlement(event.scores, right_of(dealer), None)

    def bots(self) -> Mapping[str, Policy[RuleSet, MitigatiView, MitigatiCommand]]:
        return bot_policies()

    def command_kinds(self, legal: Sequence[MitigatiCommand]) -> Sequence[Sequence[MitigatiCommand]]:
        """Bargains by their action (pass, continue, pay, sell); any other step has one
        kind. Bargaining lists up to 2 × 129 amounts beside ``pass`` and ``continue``."""
        if not isinstance(legal[0], Bargain):
            return (legal,)
        kinds: dict[str, list[MitigatiCommand]] = {}
        for command in legal:
            assert isinstance(command, Bargain)
            kinds.setdefault(command.action, []).append(command)
        return list(kinds.values())

    def closed_view(self, view: MitigatiView) -> MitigatiView:
        if view.to_act is None:
            return view
        return replace(view, to_act=None, legal=(), discard_count=None, discard_from=msgspec.UNSET)

    # ------------------------------------------------------------ audit

    def command_of(self, events: Sequence[MitigatiEvent]) -> MitigatiCommand | None:
        """Bargains, the discard, a seat's declarations (their names in §9's order;
        ``decide`` reads them as a set), a card played: each the first event of its
        command's."""
        event = events[0]
        if isinstance(event, Bargained):
            action = _ACTIONS.get(event.action)
            if action is None:
                return None  # not a bargain any command makes: verify names the event
            return Bargain(seat=event.seat, action=action, amount=event.amount)
        if isinstance(event, CardsDiscarded):
            return Discard(seat=event.seat, cards=event.cards)
        if isinstance(event, Declared):
            names = tuple(n for n in COMBINATIONS if any(d.name == n for d in event.declarations))
            return Declare(seat=event.seat, combinations=names)
        if isinstance(event, CardPlayed):
            return Play(seat=event.seat, card=event.card)
        return None

    def table_options(self, rules: RuleSet) -> dict[str, Any]:
        return {}  # Mitigati has no options in this version (§2)

    def hand_file(self, dealt: MitigatiEvent, commands: Sequence[MitigatiCommand]) -> dict[str, Any]:
        """docs/hand-files.md, "Mitigati files": the packets, no hands (they are optional), no options."""
        assert isinstance(dealt, HandDealt)
        bodies = [{k: v for k, v in msgspec.to_builtins(c).items() if v is not None and k != "v"}
                  for c in commands]
        return {"format": handfile.FORMAT, "rules": NAME, "dealer": dealt.dealer,
                "packets": msgspec.to_builtins(dealt.packets), "commands": bodies}

    def log_fields(self, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
        name = _SECRET_CARDS.get(kind)
        value = fields.get(name) if name is not None else None
        if name == "packets" and value is not None:  # the cards each seat is dealt in all
            fields[name] = [sum(len(row[seat]) for row in value) for seat in range(len(value[0]))]
        elif name is not None and value is not None:
            fields[name] = f"{len(value)} cards"
        return fields

    def read_hand_file(self, data: bytes) -> HandFileRun:
        hand_file, rules = handfile.parse(data)
        return _HandFileRun(hand_file, rules)

    # ------------------------------------------------------------ projections

    def directory_fields(self, rules: RuleSet) -> dict[str, Any]:
        # its rule set has no options, so the entry's ``rules`` stays None; the variant
        # says which game the table plays
        return {"variant": rules.variant}

    def directory_rules(self, fields: dict[str, Any]) -> RuleSet | None:
        return make_rules() if fields.get("variant") == NAME else None

    def new_ledger(self, table_id: str, version: int, rules: RuleSet) -> ledger.TableLedger:
        return ledger.new_ledger(table_id, version)

    fold_ledger = staticmethod(ledger.fold)
    ledger_type = ledger.TableLedger


MITIGATI: Final[Game[RuleSet, MitigatiState, MitigatiCommand, MitigatiEvent, MitigatiView, ledger.TableLedger]] = (
    MitigatiGame()
)

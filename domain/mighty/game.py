"""Mighty, every variant of docs/rules/mighty.md (§7, §10), as a ``Game``
(``domain/games.py``): what the table, the audit, the projections and the random players
need of it. ``domain/registry.py`` lists it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, get_args

import msgspec
from msgspec.structs import replace

from domain.bots import Policy
from domain.errors import TableError
from domain.games import DealProof, Game, HandEnding, Settlement, TableCreatedEvent
from domain.handfiles import HandFileRun, Replayed
from domain.mighty import decider as mighty_decider
from domain.mighty import handfile, ledger
from domain.mighty import legal as mighty_legal
from domain.mighty import presentation as mighty_presentation
from domain.mighty import state as mighty_state
from domain.mighty import views as mighty_views
from domain.mighty.bots import bot_policies
from domain.mighty.commands import (
    Bid,
    CallFriend,
    ChangeTrump,
    ClaimMisdeal,
    Discard,
    Exchange,
    HandCommand,
    Pass,
    Play,
)
from domain.mighty.events import (
    BidMade,
    CardPlayed,
    CardsDiscarded,
    FriendCalled,
    HandDealt,
    HandEvent,
    HandPassedOut,
    HandScored,
    KittyExchanged,
    MisdealClaimed,
    Passed,
    TrumpChanged,
)
from domain.mighty.rules import VARIANTS, RuleSet, make_rules
from domain.mighty.state import Finished, HandState, Redeal
from domain.mighty.views import HandView


class TableCreated(TableCreatedEvent, frozen=True, tag="table_created"):
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


# Card fields `mighty log` never prints (docs/rules/mighty.md §8): the deal (each hand, the kitty),
# the kitty when it was not turned up, every discard and what was kept from the kitty
# (mighty-3); cards are shown as a count. `mighty export` shows a hand once it has ended.
_SECRET_CARDS: Final[dict[str, tuple[str, ...]]] = {
    "hand_dealt": ("hands", "kitty"),
    "cards_discarded": ("cards", "taken"),
    "kitty_exchanged": ("take", "discard"),
    # the friend's seat before the reveal, and (which it tells) whether the leader holds a Joker
    "friend_called": ("holder",),
    "card_played": ("joker_call_effective",),
}


def _called(event: FriendCalled) -> str:
    """What a friend call named: a card, or the call's kind (``first_trick``, ``none``)."""
    return event.card if event.call == "card" and event.card else event.call


@dataclass(frozen=True)
class _HandFileRun:
    hand_file: handfile.HandFile
    rules: RuleSet

    @property
    def variant(self) -> str:
        return self.rules.variant

    @property
    def players(self) -> int:
        return self.rules.spec.players

    def replay(self, as_seat: int | None, view: Callable[[Any], Any] | None = None) -> Replayed:
        outcome = handfile.replay(self.hand_file, self.rules, as_seat=as_seat, view=view)
        return Replayed(outcome.steps, outcome.rejected, lambda: handfile.output_of(outcome))


class MightyGame:
    """Mighty at a table: exactly what ``domain/table.py`` did before it had games."""

    name: Final = "mighty"
    variants: tuple[str, ...] = tuple(VARIANTS)  # docs/rules/mighty.md §7, §10
    rules_type = RuleSet
    created_type = TableCreated
    deal_type = HandDealt
    hand_events: tuple[type[HandEvent], ...] = get_args(HandEvent)
    command_types: tuple[type[HandCommand], ...] = get_args(HandCommand)
    ends_hand: tuple[type[HandEvent], ...] = (HandScored, HandPassedOut, MisdealClaimed)
    scores_hand: tuple[type[HandEvent], ...] = (HandScored,)  # a passed-out or thrown-in deal is redealt (§3)
    view_type = HandView
    presentation = mighty_presentation.PRESENTATION
    command_union: Any = HandCommand

    # The hot path (a bot's every step, every fold) calls the rules' own functions,
    # bound here unwrapped.
    decide = staticmethod(mighty_decider.decide)
    evolve = staticmethod(mighty_decider.evolve)
    is_terminal = staticmethod(mighty_decider.is_terminal)
    to_act = staticmethod(mighty_state.to_act)
    legal_commands = staticmethod(mighty_legal.legal_commands)
    all_views = staticmethod(mighty_views.all_views)
    seat_view = staticmethod(mighty_views.seat_view)
    spectator_view = staticmethod(mighty_views.spectator_view)
    audit_view = staticmethod(mighty_views.audit_view)

    # ------------------------------------------------------------ the table

    def make_rules(self, variant: str, options: dict[str, Any]) -> RuleSet:
        rules = make_rules(variant, options)
        if not rules.spec.playable:
            raise TableError("variant_not_playable", f"{rules.variant} cannot be played here yet.")
        return rules

    def players(self, rules: RuleSet) -> int:
        return rules.spec.players

    def deck(self, rules: RuleSet) -> tuple[str, ...]:
        return rules.spec.deck

    def created(self, table_id: str, rules: RuleSet, name: str, created_by: str | None) -> TableCreated:
        return TableCreated(table_id=table_id, rules=rules, rules_fingerprint=rules.fingerprint(),
                            name=name, created_by=created_by)

    def deal(self, rules: RuleSet, order: tuple[str, ...], *, dealer: int, hand_no: int,
             previous_declarer: int | None, commitment: str, salt: str) -> HandEvent:
        """§2: seat *i* is dealt ``order[i*h:(i+1)*h]``, the kitty is the tail; the first
        bidder is the dealer, the seat to the dealer's left or the previous declarer."""
        spec = rules.spec
        size, n = spec.hand_size, spec.players
        hands = tuple(order[i * size:(i + 1) * size] for i in range(n))
        first = dealer
        if rules.first_bidder == "left_of_dealer":
            first = (dealer + 1) % n
        elif rules.first_bidder == "previous_declarer" and previous_declarer is not None:
            first = previous_declarer
        dealt = mighty_decider.deal_event(
            rules, dealer=dealer, hands=hands, kitty=order[n * size:],
            first_bidder=first, hand_no=hand_no, commitment=commitment,
        )
        return replace(dealt, salt=salt)

    def deal_proof(self, dealt: HandEvent) -> DealProof:
        assert isinstance(dealt, HandDealt)
        return DealProof(dealt.hand_no, dealt.commitment, dealt.salt)

    def deal_order(self, dealt: HandEvent) -> tuple[str, ...]:
        assert isinstance(dealt, HandDealt)
        return tuple(c for h in dealt.hands for c in h) + dealt.kitty

    def hand_order(self, hand: HandState) -> tuple[str, ...]:
        return tuple(c for h in hand.dealt for c in h) + hand.kitty

    def redealt(self, hand: HandState) -> bool:
        return isinstance(hand, Redeal)

    def hand_ending(self, event: HandEvent) -> HandEnding:
        # a passed-out or thrown-in deal scores nothing and is dealt again (§3)
        if isinstance(event, HandScored):
            return HandEnding(True, event.scores)
        return HandEnding(False, None)

    def settle(self, rules: RuleSet, hand: HandState, event: HandEvent, *,
               dealer: int, seats: int) -> Settlement | None:
        """§2, §6: the scores join the totals; the deal passes to the left, or to the
        friend (two packs: the lowest friend seat; alone: the declarer)."""
        if not isinstance(event, HandScored):
            return None
        after = (dealer + 1) % seats
        if rules.next_dealer == "friend":
            friends = hand.friends if isinstance(hand, Finished) else ()
            friend = event.friend if event.friend is not None else next(iter(friends), None)
            after = friend if friend is not None else event.declarer
        return Settlement(event.scores, after, event.declarer)

    def bots(self) -> Mapping[str, Policy[RuleSet, HandView, HandCommand]]:
        return bot_policies()

    def command_kinds(self, legal: Sequence[HandCommand]) -> Sequence[Sequence[HandCommand]]:
        return (legal,)  # one kind: a uniform pick

    def closed_view(self, view: HandView) -> HandView:
        if view.to_act is None:
            return view
        return replace(view, to_act=None, legal=(), discard_count=None)

    # ------------------------------------------------------------ audit

    def command_of(self, events: Sequence[HandEvent]) -> HandCommand | None:
        calls = [e for e in events if isinstance(e, FriendCalled)]
        if len(calls) == 2:  # one CallFriend of two calls wrote both (docs/rules/mighty.md §10.4, item 3)
            first, second = (_called(call) for call in calls)
            return CallFriend(seat=calls[0].seat, friend=(first, second), lead_suit=calls[0].lead_suit)
        event = events[0]
        if isinstance(event, BidMade):
            return Bid(seat=event.seat, points=event.points, trump=event.trump)
        if isinstance(event, Passed):
            return Pass(seat=event.seat)
        if isinstance(event, CardPlayed):
            return Play(seat=event.seat, card=event.card, suit=event.suit, joker_call=event.joker_call)
        if isinstance(event, CardsDiscarded):
            return Discard(seat=event.seat, cards=event.cards, take=event.taken)
        if isinstance(event, KittyExchanged):
            return Exchange(seat=event.seat, take=event.take, discard=event.discard)
        if isinstance(event, TrumpChanged):
            return ChangeTrump(seat=event.seat, trump=event.trump)
        if isinstance(event, FriendCalled):
            return CallFriend(seat=event.seat, friend=_called(event), lead_suit=event.lead_suit)
        if isinstance(event, MisdealClaimed):
            return ClaimMisdeal(seat=event.seat)
        return None

    def table_options(self, rules: RuleSet) -> dict[str, Any]:
        return dict(rules.options())

    def hand_file(self, dealt: HandEvent, commands: Sequence[HandCommand]) -> dict[str, Any]:
        """docs/hand-files.md: the deal, the options that differ from the variant's defaults,
        and each command with only the fields it uses (``joker_call`` only under the
        option that reads it)."""
        assert isinstance(dealt, HandDealt)
        bodies: list[dict[str, Any]] = []
        for command in commands:
            body = {k: v for k, v in msgspec.to_builtins(command).items() if v is not None and k != "v"}
            if body.get("type") == "play" and dealt.rules.joker_call != "declared":
                body.pop("joker_call", None)
            bodies.append(body)
        return handfile.to_hand_file(dealt.rules, dealt, bodies)

    def log_fields(self, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
        secret = _SECRET_CARDS.get(kind, ())
        if kind == "kitty_taken" and not fields.get("shown"):
            secret = ("cards",)
        for name in secret:
            value = fields.get(name)
            if isinstance(value, str | int):  # a card, a seat, a yes or no
                fields[name] = "…"
            elif name == "hands" and value is not None:
                fields[name] = [len(h) for h in value]
            elif value is not None:
                fields[name] = f"{len(value)} cards"
        return fields

    def read_hand_file(self, data: bytes) -> HandFileRun:
        hand_file, rules = handfile.parse(data)
        return _HandFileRun(hand_file, rules)

    # ------------------------------------------------------------ projections

    def directory_fields(self, rules: RuleSet) -> dict[str, Any]:
        return {"rules": msgspec.to_builtins(rules)}

    def directory_rules(self, fields: dict[str, Any]) -> RuleSet | None:
        found = fields.get("rules")
        return msgspec.convert(found, RuleSet) if isinstance(found, dict) else None

    def new_ledger(self, table_id: str, version: int, rules: RuleSet) -> ledger.TableLedger:
        return ledger.new_ledger(table_id, version, rules)

    fold_ledger = staticmethod(ledger.fold)
    ledger_type = ledger.TableLedger


MIGHTY: Final[Game[RuleSet, HandState, HandCommand, HandEvent, HandView, ledger.TableLedger]] = MightyGame()

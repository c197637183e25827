"""Audit a stored table: ``mighty verify``, ``mighty export``, ``mighty log``.

verify checks three things and names the first bad entry:
1. the hash chain (each event's hash covers the previous hash and its bytes);
2. every deal commitment (the revealed salt and order hash to the commitment published
   before bidding, and the order is the one dealt);
3. that replaying the stream through the domain yields what is stored: each command's
   events are re-derived by ``decide`` from the command they record, and must be equal,
   byte for byte, to the stored ones (trick winners, scores, everything).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

from domain.codec import decode_event, to_builtins
from domain.errors import MightyError
from domain.games import MIGHTY, MITIGATI_GAME, AnyHandCommand
from domain.mighty.commands import (
    Bid,
    CallFriend,
    ChangeTrump,
    ClaimMisdeal,
    Discard,
    Exchange,
    Pass,
    Play,
)
from domain.mighty.events import (
    BidMade,
    CardPlayed,
    CardsDiscarded,
    FriendCalled,
    HandDealt,
    KittyExchanged,
    MisdealClaimed,
    Passed,
    TrumpChanged,
)
from domain.mighty.handfile import to_hand_file
from domain.mitigati import commands as mcmd
from domain.mitigati import events as mev
from domain.mitigati.commands import COMBINATIONS
from domain.table import (
    CloseTable,
    CreateTable,
    DealHand,
    DealRevealed,
    JoinSeat,
    LeaveSeat,
    MitigatiTableCreated,
    PlayerJoined,
    PlayerLeft,
    PlayerResigned,
    Resign,
    SeatAway,
    SetAway,
    StartTable,
    Submission,
    TableClosed,
    TableCreated,
    TableEvent,
    TableOnlyCommand,
    TableStarted,
    deal_commitment,
    decide,
    evolve,
    initial_state,
)
from services.store.base import GENESIS, EventStore, StoredEvent, event_hash


@dataclass(frozen=True)
class Finding:
    version: int
    problem: str


@dataclass(frozen=True)
class Verdict:
    table_id: str
    events: int
    hands: int
    finding: Finding | None

    @property
    def ok(self) -> bool:
        return self.finding is None


def command_of(event: TableEvent) -> tuple[TableOnlyCommand | AnyHandCommand, str | None] | None:
    """The command (and sender) an event records, or None for a derived event."""
    if isinstance(event, MITIGATI_GAME.hand_events):
        return _mitigati_command_of(event)
    if isinstance(event, BidMade):
        return Bid(seat=event.seat, points=event.points, trump=event.trump), None
    if isinstance(event, Passed):
        return Pass(seat=event.seat), None
    if isinstance(event, CardPlayed):
        return Play(seat=event.seat, card=event.card, suit=event.suit, joker_call=event.joker_call), None
    if isinstance(event, CardsDiscarded):
        return Discard(seat=event.seat, cards=event.cards, take=event.taken), None
    if isinstance(event, KittyExchanged):
        return Exchange(seat=event.seat, take=event.take, discard=event.discard), None
    if isinstance(event, TrumpChanged):
        return ChangeTrump(seat=event.seat, trump=event.trump), None
    if isinstance(event, FriendCalled):
        friend = event.card if event.call == "card" and event.card else event.call
        return CallFriend(seat=event.seat, friend=friend, lead_suit=event.lead_suit), None
    if isinstance(event, MisdealClaimed):
        return ClaimMisdeal(seat=event.seat), None
    return _table_command_of(event)


_ACTIONS: dict[str, mcmd.Action] = {"pass": "pass", "pay": "pay", "sell": "sell", "continue": "continue"}


def _mitigati_command_of(event: TableEvent) -> tuple[TableOnlyCommand | AnyHandCommand, str | None] | None:
    """A Mitigati hand event's command: bargains, the discard, a seat's declarations (their
    names in §9's order; ``decide`` reads them as a set), a card played; the deal."""
    if isinstance(event, mev.Bargained):
        action = _ACTIONS.get(event.action)
        if action is None:
            return None  # not a bargain any command makes: verify names the event
        return mcmd.Bargain(seat=event.seat, action=action, amount=event.amount), None
    if isinstance(event, mev.CardsDiscarded):
        return mcmd.Discard(seat=event.seat, cards=event.cards), None
    if isinstance(event, mev.Declared):
        names = tuple(n for n in COMBINATIONS if any(d.name == n for d in event.declarations))
        return mcmd.Declare(seat=event.seat, combinations=names), None
    if isinstance(event, mev.CardPlayed):
        return mcmd.Play(seat=event.seat, card=event.card), None
    if isinstance(event, mev.HandDealt):
        salt = event.salt if isinstance(event.salt, str) else ""
        return DealHand(order=MITIGATI_GAME.deal_order(event), salt=salt), None
    return None


def _table_command_of(event: TableEvent) -> tuple[TableOnlyCommand, str | None] | None:
    if isinstance(event, MitigatiTableCreated):
        return CreateTable(variant=event.rules.variant, options={}, name=event.name, hands=event.hands,
                           turn_seconds=event.turn_seconds, bots=event.bots, created=event.created), event.created_by
    if isinstance(event, TableCreated):
        options = {k: v for k, v in event.rules.options().items()}
        return CreateTable(variant=event.rules.variant, options=options, name=event.name, hands=event.hands,
                           turn_seconds=event.turn_seconds, bots=event.bots, created=event.created), event.created_by
    if isinstance(event, PlayerJoined):
        return JoinSeat(seat=event.seat), event.player
    if isinstance(event, PlayerLeft):
        return LeaveSeat(seat=event.seat), event.player
    if isinstance(event, TableStarted):
        return StartTable(first_dealer=event.first_dealer), event.started_by
    if isinstance(event, HandDealt):
        order = tuple(c for hand in event.hands for c in hand) + event.kitty
        return DealHand(order=order, salt=event.salt or ""), None
    if isinstance(event, PlayerResigned):
        return Resign(seat=event.seat), None
    if isinstance(event, TableClosed):
        return CloseTable(reason=event.reason), None
    if isinstance(event, SeatAway):
        return SetAway(seat=event.seat, away=event.away), event.player
    return None




def _groups(stored: list[StoredEvent]) -> Iterator[list[StoredEvent]]:
    """Consecutive events appended by one command."""
    group: list[StoredEvent] = []
    for event in stored:
        if group and event.command_id != group[0].command_id:
            yield group
            group = []
        group.append(event)
    if group:
        yield group


def verify_events(table_id: str, stored: list[StoredEvent]) -> Verdict:
    finding = check_chain(stored) or check_replay(table_id, stored)
    hands = 0
    for entry in stored:
        hands += b'"type":"hand_dealt"' in entry.data or b'"type":"mitigati_hand_dealt"' in entry.data
    return Verdict(table_id, len(stored), hands, finding)


def check_chain(stored: list[StoredEvent]) -> Finding | None:
    prev = GENESIS
    for version, entry in enumerate(stored, start=1):
        if entry.version != version:
            return Finding(entry.version, f"expected version {version}: an event is missing or out of order")
        if entry.prev_hash != prev:
            return Finding(version, "its previous-hash link does not match the event before it")
        if event_hash(prev, entry.data) != entry.hash:
            return Finding(version, "its bytes do not match its hash: the event was edited")
        prev = entry.hash
    return None


def check_replay(table_id: str, stored: list[StoredEvent]) -> Finding | None:
    state = initial_state(table_id)
    commitments: dict[int, tuple[str, tuple[str, ...]]] = {}
    for group in _groups(stored):
        first = group[0].version
        try:
            events = [decode_event(e.data) for e in group]
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            return Finding(first, f"does not decode as an event: {error}")
        recorded = command_of(events[0])
        if recorded is None:
            return Finding(first, f"a {type(events[0]).__name__} cannot start a command")
        command, player = recorded
        try:
            derived = decide(state, Submission(command=command, player=player))
        except MightyError as error:
            return Finding(first, f"the rules refuse the command it records: {error.code}: {error.message}")
        if derived != events:  # as read today (upcast), so an old stream still verifies
            return Finding(_first_difference(group, events, derived), "it differs from what the rules derive")
        for event in events:
            finding = _check_commitment(event, group[0].version, commitments)
            if finding:
                return finding
            state = evolve(state, event)
    return None


def _first_difference(group: list[StoredEvent], events: list[TableEvent], derived: list[TableEvent]) -> int:
    for stored, event, expected in zip(group, events, derived, strict=False):
        if event != expected:
            return stored.version
    return group[min(len(group), len(derived)) - 1].version


def _check_commitment(event: TableEvent, version: int,
                      commitments: dict[int, tuple[str, tuple[str, ...]]]) -> Finding | None:
    if isinstance(event, HandDealt):
        commitments[event.hand_no] = (event.commitment or "", MIGHTY.deal_order(event))
    if isinstance(event, mev.HandDealt):
        commitment = event.commitment if isinstance(event.commitment, str) else ""
        commitments[event.hand_no] = (commitment, MITIGATI_GAME.deal_order(event))
    if isinstance(event, DealRevealed):
        published, order = commitments.get(event.hand_no, ("", ()))
        if event.commitment != published or event.order != order:
            return Finding(version, f"hand {event.hand_no}'s revealed deal is not the one dealt")
        if deal_commitment(event.order, event.salt) != published:
            return Finding(version, f"hand {event.hand_no}'s salt does not open its commitment")
    return None


class HandInProgress(LookupError):
    """The hand asked for has not ended: its cards are still secret (mighty.md §8)."""


def export_hand(table_id: str, stored: list[StoredEvent], hand_no: int | None,
                *, in_progress: bool = False) -> dict[str, Any]:
    """A hand file (rules/hand-file.md) for one stored hand: the last one by default.

    A hand file holds every seat's cards, so a hand is exported once it has ended (its
    deal revealed, or its table closed): before that, §8 keeps the hands secret.
    ``in_progress`` is the operator's override."""
    events = [decode_event(e.data) for e in stored]
    starts = [i for i, e in enumerate(events) if isinstance(e, HandDealt | mev.HandDealt)]
    if not starts:
        raise LookupError(f"table {table_id} has dealt no hand")
    if hand_no is None:
        index = starts[-1]
    else:
        found = [i for i in starts if getattr(events[i], "hand_no", None) == hand_no]
        if not found:
            raise LookupError(f"table {table_id} has no hand {hand_no}")
        index = found[0]
    dealt = events[index]
    assert isinstance(dealt, HandDealt | mev.HandDealt)
    over = any(isinstance(e, TableClosed) or (isinstance(e, DealRevealed) and e.hand_no == dealt.hand_no)
               for e in events[index + 1:])
    if not over and not in_progress:
        raise HandInProgress(f"hand {dealt.hand_no} of table {table_id} has not ended: its cards stay "
                             "secret until it does (--in-progress exports it anyway)")
    commands: list[dict[str, Any]] = []
    for event in events[index + 1:]:
        if isinstance(event, HandDealt | mev.HandDealt):
            break
        recorded = command_of(event)
        if recorded is None or not hasattr(recorded[0], "seat") or isinstance(recorded[0], Resign):
            continue
        body = {k: v for k, v in to_builtins(recorded[0]).items() if v is not None and k != "v"}
        if isinstance(dealt, HandDealt) and body.get("type") == "play" and dealt.rules.joker_call != "declared":
            body.pop("joker_call", None)
        commands.append(body)
    if isinstance(dealt, mev.HandDealt):
        # mitigati-hand-file.md §2: the packets, no hands (they are optional), no options
        return {"format": "mighty-hand/1", "rules": "mitigati", "dealer": dealt.dealer,
                "packets": to_builtins(dealt.packets), "commands": commands}
    return to_hand_file(dealt.rules, dealt, commands)


# Card fields ``mighty log`` never prints (mighty.md §8): the deal (each hand, the kitty),
# the kitty when it was not turned up, every discard and what was kept from the kitty
# (mighty-3); cards are shown as a count. The salt is hidden too. `mighty export` shows a
# hand once it has ended.
_SECRET_CARDS: dict[str, tuple[str, ...]] = {
    "hand_dealt": ("hands", "kitty"),
    "mitigati_hand_dealt": ("packets",),
    "mitigati_cards_discarded": ("cards",),
    "cards_discarded": ("cards", "taken"),
    "kitty_exchanged": ("take", "discard"),
}


def describe(entry: StoredEvent) -> str:
    """One readable line per event for ``mighty log``."""
    event = to_builtins(decode_event(entry.data))
    kind = event.pop("type")
    event.pop("v", None)
    secret: tuple[str, ...] = _SECRET_CARDS.get(kind, ())
    if kind == "kitty_taken" and not event.get("shown"):
        secret = ("cards",)
    for name in secret:
        value = event.get(name)
        if isinstance(value, str):
            event[name] = "…"
        elif name == "hands":
            event[name] = [len(h) for h in value]
        elif name == "packets":  # Mitigati: the cards each seat is dealt in all
            event[name] = [sum(len(row[seat]) for row in value) for seat in range(len(value[0]))]
        elif value is not None:
            event[name] = f"{len(value)} cards"
    if "salt" in event:
        event["salt"] = "…"
    fields = " ".join(f"{k}={_short(v)}" for k, v in event.items() if v not in (None, "", [], ()))
    return f"{entry.version:>5}  {kind:<16} {fields}"


def _short(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(_short(v) for v in value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_short(v)}" for k, v in value.items()) + "}"
    return str(value)


# ---------------------------------------------------------------- CLI


def _store(args: argparse.Namespace) -> EventStore:
    from services.store.redis_store import RedisEventStore, connect

    return RedisEventStore(connect(args.redis_url))


def cmd_verify(args: argparse.Namespace) -> int:
    store = _store(args)
    if args.all == (args.table is not None):
        sys.stderr.write("mighty verify: name one TABLE, or --all\n")
        return 2
    if not args.all:
        stored = store.read(args.table)
        if not stored:
            sys.stderr.write(f"mighty verify: table {args.table} has no events\n")
            return 2
        report = _verify_report(args.table, stored)
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
        return 0 if report["ok"] else 1
    bad: list[str] = []
    tables = store.table_ids()
    for table_id in tables:  # one line per table as it is checked, then the summary
        report = _verify_report(table_id, store.read(table_id))
        if not report["ok"]:
            bad.append(table_id)
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
        sys.stdout.flush()
    summary = {"tables": len(tables), "ok": len(tables) - len(bad), "bad": bad}
    sys.stdout.write(msgspec.json.encode(summary).decode() + "\n")
    return 0 if not bad else 1


def _verify_report(table_id: str, stored: list[StoredEvent]) -> dict[str, Any]:
    verdict = verify_events(table_id, stored)
    report: dict[str, Any] = {"table": table_id, "events": verdict.events, "hands": verdict.hands, "ok": verdict.ok}
    if verdict.finding:
        report["first_bad"] = {"version": verdict.finding.version, "problem": verdict.finding.problem}
    return report


def cmd_export(args: argparse.Namespace) -> int:
    try:
        document = export_hand(args.table, _store(args).read(args.table), args.hand,
                               in_progress=args.in_progress)
    except LookupError as error:
        sys.stderr.write(f"mighty export: {error}\n")
        return 2
    text = msgspec.json.format(msgspec.json.encode(document), indent=2).decode() + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_log(args: argparse.Namespace) -> int:
    for entry in _store(args).read(args.table):
        sys.stdout.write(describe(entry) + "\n")
    return 0


def register(sub: Any) -> None:
    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    for name, run, text in (
        ("verify", cmd_verify, "check a table's hash chain, deal commitments and replay"),
        ("export", cmd_export, "write a stored hand as a hand file"),
        ("log", cmd_log, "print a table's events readably"),
    ):
        parser = sub.add_parser(name, help=text)
        if name == "verify":
            parser.add_argument("table", nargs="?", default=None)
            parser.add_argument("--all", action="store_true", help="every table in the store, one line each")
        else:
            parser.add_argument("table")
        parser.add_argument("--redis-url", default=url, help="default: $REDIS_URL")
        if name == "export":
            parser.add_argument("--hand", type=int, default=None, help="hand number (default: last)")
            parser.add_argument("-o", "--output", default=None)
            parser.add_argument("--in-progress", action="store_true",
                                help="export a hand that has not ended (it shows every seat's cards)")
        parser.set_defaults(run=run)

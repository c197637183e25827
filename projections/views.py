"""Per-seat views (docs/rules/mighty.md §8): what each seat, a spectator and the audit may see.

The projection keeps the domain's own ``TableState`` (folding ``domain.table.evolve``) and
derives every document with the views of the table's game (``Game.seat_view`` and the
rest, ``domain/games.py``), which already hide what a reader may not see: no rule is re-implemented here. Documents, per table ``t``:

- ``view:<t>:<seat>`` for each seat, ``view:<t>:spectator``: the current hand as that
  reader sees it, with the table around it, at the table's version (the client's cursor);
  once the table is closed, the seat views are a last word (``docs.LastWord``): the table
  without the hand, announced to each seat's follower, then not kept (nobody acts there
  again; a reader after that is shown the spectator's view, the table's public face);
- (no audit document: the audit view of an ended hand and its deal's proof are read from
  the stream by the audit routes, ``services/gateway/audit_reads.py``; releases before
  2026-12-05 wrote ``view:<t>:audit:<hand_no>``, which nothing read and the archive still
  deletes);
- the hash ``turns``, field ``t``: who is to act at the table (``projections/turns.py``),
  what wakes the bot worker; no field while nobody is.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
from msgspec.structs import replace

from domain.games import TableCreatedEvent
from domain.table import (
    TableEvent,
    TableState,
    evolve,
    initial_state,
)
from projections.docs import DocKey, Docs, LastWord, changed, encode, encode_json
from projections.turns import TURNS_DOC, turn_of

SPECTATOR = "spectator"
AUDIT = "audit"


class DealProof(msgspec.Struct, frozen=True, kw_only=True):
    """§2: the deal's card order and salt, revealed when the hand ends."""

    order: tuple[str, ...]
    salt: str
    commitment: str


class TableView(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    version: int  # the table's version this view reflects: a client's resume cursor
    reader: str  # a seat number, "spectator" or "audit"
    name: str
    variant: str | None
    rules_fingerprint: str | None
    status: str
    seats: tuple[str | None, ...]
    dealer: int
    hand_no: int  # hands dealt so far
    hands_scored: int
    totals: tuple[int, ...]
    commitment: str | None  # the current deal's commitment: public before bidding (§2)
    hand: msgspec.Struct | None  # a view of the table's game (Mighty's HandView, a MitigatiView)
    deal: DealProof | None = None  # always None here: a deal's proof is in the replay's ``deal``
    # At a table created with ``turn_seconds``, while a seat is to act: when its turn ends
    # (ms since the epoch), the append time of the event that began the turn plus the
    # table's time for a turn. The timer worker plays the seat then (``turn_deadline``);
    # UNSET (left out) at an untimed table, or with nobody to act.
    deadline_ms: int | msgspec.UnsetType = msgspec.UNSET
    # the seats whose players are away from the started table, a bot playing them
    # (docs/bots.md, "Away seats"); UNSET (left out) while there is none, as in every
    # view written before it was added
    away: tuple[int, ...] | msgspec.UnsetType = msgspec.UNSET


class ViewState(msgspec.Struct, frozen=True, kw_only=True):
    table: TableState
    version: int = 0
    name: str = ""
    bots: dict[str, str] = {}  # seat (as text) -> the level of the bot given it at creation
    turn_seconds: int = 0  # a turn's time at this table (0: none)
    at_ms: int | None = None  # when the last event folded was appended (None: not known)


def initial(table_id: str) -> ViewState:
    return ViewState(table=initial_state(table_id))


def fold(state: ViewState, version: int, event: TableEvent, at_ms: int | None = None) -> ViewState:
    table = evolve(state.table, event)
    if isinstance(event, TableCreatedEvent):
        return replace(state, table=table, version=version, name=event.name, bots=dict(event.bots),
                       turn_seconds=event.turn_seconds, at_ms=at_ms)
    return replace(state, table=table, version=version, at_ms=at_ms)


def turn_deadline(state: ViewState) -> int | None:
    """When the turn of the seat to act ends (ms since the epoch): the append time of the
    event that began it plus the table's ``turn_seconds``; None at an untimed table, with
    nobody to act, or when the store did not keep the append time."""
    table = state.table
    if state.turn_seconds <= 0 or state.at_ms is None or table.status != "playing":
        return None
    if table.awaiting_deal or table.hand is None or table.game.to_act(table.hand) is None:
        return None
    return state.at_ms + state.turn_seconds * 1000


def readers(state: ViewState) -> list[str]:
    return [str(seat) for seat in range(len(state.table.seats))] + [SPECTATOR]


def view_name(table_id: str, reader: str) -> str:
    return f"view:{table_id}:{reader}"


def audit_name(table_id: str, hand_no: int) -> str:
    """The audit document releases before 2026-12-05 wrote (the archive deletes it)."""
    return f"view:{table_id}:{AUDIT}:{hand_no}"


def render(state: ViewState, reader: str) -> TableView:
    """The view of one reader: a seat number or ``spectator``."""
    hand = state.table.hand
    game = state.table.game
    shown: msgspec.Struct | None = None
    if hand is not None:
        shown = game.spectator_view(hand) if reader == SPECTATOR else game.seat_view(hand, int(reader))
    return _table_view(state, reader, shown)


def render_all(state: ViewState) -> dict[str, TableView]:
    """Every reader's view at once: the public face is computed a single time, and so is
    the table around each reader's view of the hand (its fields are every reader's)."""
    hand = state.table.hand
    around = _table_view(state, SPECTATOR, None)
    if hand is None:
        return {reader: replace(around, reader=reader) for reader in readers(state)}
    seats, spectator = state.table.game.all_views(hand)
    views = {str(seat): replace(around, reader=str(seat), hand=_shown(state, view))
             for seat, view in enumerate(seats)}
    views[SPECTATOR] = replace(around, hand=_shown(state, spectator))
    return views


def _shown(state: ViewState, hand: msgspec.Struct | None) -> msgspec.Struct | None:
    """A reader's view of the hand as the table shows it: closed mid-hand, every command
    is refused now (table_closed), so nobody is to act."""
    if state.table.status == "closed" and hand is not None:
        closed: msgspec.Struct = state.table.game.closed_view(hand)
        return closed
    return hand


def _table_view(state: ViewState, reader: str, hand: msgspec.Struct | None) -> TableView:
    table = state.table
    rules = table.rules
    hand = _shown(state, hand)
    deadline = turn_deadline(state)
    return TableView(
        table_id=table.table_id, version=state.version, reader=reader, name=state.name,
        variant=None if rules is None else rules.variant,
        rules_fingerprint=None if rules is None else rules.fingerprint(),
        status=table.status, seats=table.seats, dealer=table.dealer, hand_no=table.hand_no,
        hands_scored=table.hands_scored, totals=table.totals, commitment=table.commitment,
        hand=hand, deadline_ms=msgspec.UNSET if deadline is None else deadline,
        away=table.away or msgspec.UNSET,
    )


class ViewsProjection:
    """The views of the tables of one partition, folded event by event.

    ``apply`` folds; ``flush`` renders the documents of the tables touched since the last
    flush and returns those that changed. A table's views are rendered once per flush,
    however many of its events arrived in between (they are snapshots with a version,
    so only the last matters).
    """

    kind = "views"

    def __init__(self) -> None:
        self.tables: dict[str, ViewState] = {}
        self._rendered: Docs = {}
        self._dirty: dict[str, None] = {}  # insertion-ordered set
        self._keys: dict[str, dict[str, DocKey]] = {}  # each table's view keys, by reader: made once

    def known(self, table_id: str) -> bool:
        return table_id in self.tables

    def restore(self, table_id: str, events: Iterable[tuple[int, TableEvent, int | None]]) -> None:
        """Rebuild a table's state from its stream (version, event, append time), up to
        what the stored views reflect."""
        state = initial(table_id)
        for version, event, at_ms in events:
            state = fold(state, version, event, at_ms)
        self.tables[table_id] = state

    def version(self, table_id: str) -> int:
        return self.tables[table_id].version

    def apply(self, table_id: str, version: int, event: TableEvent, at_ms: int | None = None) -> None:
        state = fold(self.tables.get(table_id) or initial(table_id), version, event, at_ms)
        self.tables[table_id] = state
        self._dirty[table_id] = None

    def flush(self) -> Docs:
        docs: Docs = {}
        closed: list[str] = []
        for table_id in self._dirty:
            state = self.tables[table_id]
            if state.table.status == "new":
                continue
            closing = state.table.status == "closed"
            keys = self._keys.get(table_id)
            if keys is None:
                keys = self._keys[table_id] = {}
            for reader, view in render_all(state).items():
                key = keys.get(reader)
                if key is None:
                    key = keys[reader] = DocKey(view_name(table_id, reader))
                # A closed table's seat views are a last word: the table without the hand
                # (nobody acts there again; the audit shows every hand in full), announced
                # so that a seat's follower learns the table closed, then not kept (they
                # would cost every closed table a key a seat until it is archived). The
                # spectator view keeps the last public face, which every reader is shown.
                if closing and reader != SPECTATOR:
                    docs[key] = LastWord(encode(replace(view, hand=None)))
                    continue
                docs[key] = encode(view)
            turn = turn_of(state.table, state.version, state.bots, state.turn_seconds, turn_deadline(state))
            docs[DocKey(TURNS_DOC, table_id)] = None if turn is None else encode_json(turn)  # JSON: docs.py
            if closing:
                closed.append(table_id)
        self._dirty.clear()
        out = changed(self._rendered, docs)
        for table_id in closed:  # nothing follows a close: free its memory
            self._forget(table_id)
        return out

    def _forget(self, table_id: str) -> None:
        del self.tables[table_id]
        # every view this projection rendered of the table was rendered under these keys
        for key in self._keys.pop(table_id, {}).values():
            self._rendered.pop(key, None)
        self._rendered.pop(DocKey(TURNS_DOC, table_id), None)

"""The audit of a table, resumable: ``verify`` and the hand index checked and folded slice
by slice, from a checkpoint instead of the first event.

A ``Checkpoint`` is where a verify of a table stood at a hand boundary (before the first
deal, or after a hand ended and its deal was revealed): the version and hash of the last
event checked, the hash version it named, the deals counted, the table's state folded so
far (what the rules need to decide the commands after it: its seats, dealer, totals ...,
with the table's first event, which names its rules) and the hands dealt so far, each
with its status, scores and the version of its deal. An audit started from one reads and
checks only the events after it, and the first of those must link to the checkpoint's
hash: the stream edited at or before the checkpoint *and re-chained* fails there.

Checkpoints are written by the service alone (the gateway, after it checked the events
up to one: ``services/gateway/audit_reads.py``); a stranger can only append commands,
which are checked like any others. What a checkpointed verify proves, and what it does
not (an edit before the checkpoint that leaves the later hashes as they were), is in
docs/store.md, "Checkpointed verify"; ``mighty verify`` (the CLI) checks everything from
the first event.

The checks are ``verify.py``'s, in the same order (the chain first: where it breaks is
the answer, else the first version the replay refuses; where a stored hash proves only
that one of the entries since the last matching one was changed, the replay's finding
among them), so a checkpointed verify answers what ``verify_events`` answers on the whole
stream. Entries between two anchors have no stored hash of their own (docs/store.md, "The
stored entry"): a hand boundary becomes a checkpoint only once a stored hash at or after
it matched, so a checkpoint's version is always proven (a range named from one starts
after it at the earliest).
"""

from __future__ import annotations

from typing import Final

import msgspec

from domain.codec import decode_event
from domain.games import AnyGame
from domain.registry import game_of_event
from domain.table import (
    TableClosed,
    TableEvent,
    TableState,
    evolve,
    initial_state,
)
from services.audit.verify import _DEAL_TAGS, Finding, check_link, meta_finding, replay_command
from services.store.base import GENESIS, HASH_V1, Head, StoredEvent, one_append

FIRST_HAND: Final = 1  # a hand's number as a person reads it (docs/api.md): the events count from 0


class HandEntry(msgspec.Struct, frozen=True, array_like=True):
    """One dealt hand: its number (from 1), status, scores once it has any, and the
    version of its deal (the hand's events run from there to the next deal)."""

    hand: int
    status: str  # finished, playing or abandoned
    scores: list[int] | None
    first: int


class TableFields(msgspec.Struct, frozen=True, array_like=True):
    """The table's state at a hand boundary, but its rules (from its first event) and its
    hand (none, or one that has ended: nothing the rules ask of it)."""

    status: str
    seats: list[str | None]
    dealer: int
    hand_no: int
    previous_declarer: int | None
    totals: list[int]
    hands_scored: int
    match_hands: int
    away: list[int]
    timeouts: list[int] = []  # each seat's timed-out turns in a row (none in a checkpoint written before it)


class Checkpoint(msgspec.Struct, frozen=True):
    version: int = 0
    hash: str = GENESIS
    hash_version: int = HASH_V1
    deals: int = 0
    created: bytes = b""  # the table's first event
    table: TableFields | None = None
    hands: list[HandEntry] = []


START: Final = Checkpoint()
_encode = msgspec.json.Encoder().encode
_decoder = msgspec.json.Decoder(Checkpoint)


def encode_checkpoint(checkpoint: Checkpoint) -> bytes:
    return _encode(checkpoint)


def decode_checkpoint(data: bytes | None) -> Checkpoint:
    """A stored checkpoint; none, or one that does not read, is the start (the audit then
    checks everything: a checkpoint is only ever a shortcut)."""
    if not data:
        return START
    try:
        return _decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return START


def _restored(table_id: str, checkpoint: Checkpoint) -> TableState:
    state = initial_state(table_id)
    fields = checkpoint.table
    if not checkpoint.created or fields is None:
        return state
    state = evolve(state, decode_event(checkpoint.created))
    return msgspec.structs.replace(
        state, status=fields.status, seats=tuple(fields.seats), dealer=fields.dealer, hand_no=fields.hand_no,
        previous_declarer=fields.previous_declarer, totals=tuple(fields.totals), hands_scored=fields.hands_scored,
        match_hands=fields.match_hands, away=tuple(fields.away), hand=None, salt=None, commitment=None,
        timeouts=tuple(fields.timeouts) or state.timeouts)


class Audit:
    """One table's audit from ``start`` on: ``take`` the events after it, in order, in
    slices (``complete`` with the last: the read reached the stream's end); then
    ``finding``, ``events``, ``deals`` and ``hands`` answer for the whole stream, and
    ``saved`` is the latest hand boundary it passed with every check holding (the
    checkpoint to store)."""

    def __init__(self, table_id: str, start: Checkpoint = START) -> None:
        self.table_id = table_id
        self.start = self.saved = start
        self.events = start.version  # entries read (start's, then each taken)
        self.deals = start.deals
        self.hands = list(start.hands)
        self.chain: Finding | None = None
        self.replay: Finding | None = None
        self._prev, self._newest, self._version = start.hash, start.hash_version, start.version
        self._proven = start.version  # the last entry whose stored hash matched (a checkpoint is proven)
        self._unproven: list[Checkpoint] = []  # hand boundaries passed since, the latest last
        self._created = start.created
        self._state = _restored(table_id, start)
        self._game: AnyGame | None = None  # the game of the hand being played
        self._commitments: dict[int, tuple[str, tuple[str, ...]]] = {}
        self._pending: list[StoredEvent] = []  # the last command's events so far

    @property
    def finding(self) -> Finding | None:
        chain = self.chain
        if chain is not None and chain.among(self.replay):  # the entry a stored hash's range holds
            return self.replay
        return chain or self.replay

    def against(self, head: Head) -> Finding | None:
        """The table's meta, read before the events, against the end of what was checked
        (``check_meta`` for a checkpointed audit): it catches an edit after the last stored
        hash (docs/store.md, "The stored entry") and deleted last events. A stream that went
        on past ``head`` is not judged by it: an append came meanwhile, checked by the
        append script against the meta then."""
        if self.chain is not None or head.version < self._version:
            return None
        return meta_finding(self._version, self._prev, self._proven, head)

    def take(self, events: list[StoredEvent], complete: bool) -> None:
        for entry in events:
            if self.chain is None:
                self.chain = self._link(entry)
            if self._pending and not one_append(self._pending[0], entry):
                self._command(self._pending)
                self._pending = []
            self._pending.append(entry)
        if complete and self._pending:
            self._command(self._pending)
            self._pending = []

    def _link(self, entry: StoredEvent) -> Finding | None:
        """``check_chain`` for one more entry."""
        version = self._version + 1
        finding = check_link(entry, version, self._prev, self._newest, self._proven)
        if finding is not None:
            return finding
        self._prev, self._newest, self._version = entry.hash, entry.hash_version, version
        if entry.hash_stored:
            self._proven = version
            self._promote()
        return None

    def _promote(self) -> None:
        """The latest hand boundary passed at or before the last proven entry is the
        checkpoint to store."""
        proven = [c for c in self._unproven if c.version <= self._proven]
        if proven:
            self.saved = proven[-1]
            self._unproven = [c for c in self._unproven if c.version > self._proven]

    def _command(self, group: list[StoredEvent]) -> None:
        """One command's events: counted, folded into the hand index, replayed."""
        self.events += len(group)
        events: list[TableEvent] = []
        for entry in group:
            self.deals += any(tag in entry.data for tag in _DEAL_TAGS)
            if not self._created and entry.version == 1:
                self._created = entry.data
            try:
                events.append(decode_event(entry.data))
            except (msgspec.DecodeError, msgspec.ValidationError) as error:
                if self.replay is None:
                    self.replay = Finding(entry.version, f"does not decode as an event: {error}")
                continue
            self._index(events[-1], entry.version)
        if self.replay is None and len(events) == len(group):
            self.replay = self._replay(group, events)
            if self.replay is None and self.chain is None and self._at_boundary():
                self._unproven.append(self._checkpoint(group[-1]))
                self._promote()

    def _index(self, event: TableEvent, version: int) -> None:
        """``services/gateway/audit.py``'s ``hands_of``, one event at a time."""
        of_event = game_of_event(event)
        if of_event is not None and isinstance(event, of_event.deal_type):
            self._game = of_event
            number = of_event.deal_proof(event).hand_no + FIRST_HAND
            self.hands.append(HandEntry(number, "playing", None, version))
            return
        game = self._game
        if game is None or not self.hands or self.hands[-1].status != "playing":
            return
        last = self.hands[-1]
        if isinstance(event, game.ends_hand):
            ending = game.hand_ending(event)
            scores = None if ending.scores is None else list(ending.scores)
            self.hands[-1] = HandEntry(last.hand, "finished" if ending.finished else "abandoned", scores, last.first)
        elif isinstance(event, TableClosed):
            self.hands[-1] = HandEntry(last.hand, "abandoned", None, last.first)

    def _replay(self, group: list[StoredEvent], events: list[TableEvent]) -> Finding | None:
        """``check_replay`` for one command."""
        self._state, finding = replay_command(self._state, group, events, self._commitments)
        return finding

    def _at_boundary(self) -> bool:
        """Between hands: no hand, or one that ended with its deal revealed."""
        state = self._state
        if self.hands and self.hands[-1].status == "playing":
            return False
        return state.hand is None or (state.salt is None and state.game.is_terminal(state.hand))

    def _checkpoint(self, last: StoredEvent) -> Checkpoint:
        state = self._state
        self._commitments.clear()  # every hand dealt so far has revealed its deal
        fields = TableFields(status=state.status, seats=list(state.seats), dealer=state.dealer,
                             hand_no=state.hand_no, previous_declarer=state.previous_declarer,
                             totals=list(state.totals), hands_scored=state.hands_scored,
                             match_hands=state.match_hands, away=list(state.away), timeouts=list(state.timeouts))
        return Checkpoint(version=last.version, hash=last.hash, hash_version=last.hash_version, deals=self.deals,
                          created=self._created, table=fields if self._created else None, hands=list(self.hands))

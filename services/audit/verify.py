"""``mighty verify``: check a stored table and name the first bad entry.

verify checks three things:
1. the hash chain (each event's hash covers the previous hash and its bytes);
2. every deal commitment (the revealed salt and order hash to the commitment published
   before bidding, and the order is the one dealt);
3. that replaying the stream through the domain yields what is stored: each command's
   events are re-derived by ``decide`` from the command they record, and must be equal,
   byte for byte, to the stored ones (trick winners, scores, everything).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import msgspec

from domain.codec import decode_event
from domain.errors import MightyError
from domain.registry import GAMES, game_of_event
from domain.table import (
    DealRevealed,
    Submission,
    TableEvent,
    deal_commitment,
    decide,
    evolve,
    initial_state,
)
from domain.upcasting import as_recorded
from services.audit.recorded import command_of
from services.store.base import GENESIS, StoredEvent, event_hash

# The stored form of every game's deal event's tag: a hand is counted without decoding.
_DEAL_TAGS: Final = tuple(f'"type":"{game.deal_type.__struct_config__.tag}"'.encode() for game in GAMES.values())


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
        hands += any(tag in entry.data for tag in _DEAL_TAGS)
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
        recorded = command_of(events)
        if recorded is None:
            return Finding(first, f"a {type(events[0]).__name__} cannot start a command")
        command, player = recorded
        try:
            derived = decide(state, Submission(command=command, player=player))
        except MightyError as error:
            return Finding(first, f"the rules refuse the command it records: {error.code}: {error.message}")
        # as read today (upcast), so an old stream still verifies; a fact added since an
        # event was stored is not in it, so it is not compared (domain/upcasting.py)
        derived = [as_recorded(d, e) for d, e in zip(derived, events, strict=False)] + derived[len(events):]
        if derived != events:
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
    game = game_of_event(event)
    if game is not None and isinstance(event, game.deal_type):
        proof = game.deal_proof(event)
        commitments[proof.hand_no] = (proof.commitment or "", game.deal_order(event))
    if isinstance(event, DealRevealed):
        published, order = commitments.get(event.hand_no, ("", ()))
        if event.commitment != published or event.order != order:
            return Finding(version, f"hand {event.hand_no + 1}'s revealed deal is not the one dealt")
        if deal_commitment(event.order, event.salt) != published:
            return Finding(version, f"hand {event.hand_no}'s salt does not open its commitment")
    return None

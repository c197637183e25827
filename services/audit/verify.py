"""``mighty verify``: check a stored table and name the first bad entry.

verify checks five things:
1. the hash chain: versions 1, 2, 3, ... each hash the hash of its entry by the hash
   version the entry names (version 2: the previous hash, the command id and the bytes;
   version 1, streams stored before it: the previous hash and the bytes), the previous
   hash being the hash of the entry before (GENESIS for the first), and the hash version
   never going back from 2 to 1. An entry stores no previous hash of its own (the store
   reads it off the entry before); one written by an older release does (``p``), and that
   stored link must name the hash before it;
2. the table's meta (its version and head hash, what every append checks against): it
   must name the stream's last event, so a stream whose last events were deleted, or
   edited with its chain recomputed, is caught even where the chain itself holds;
3. the partition feed's copies of the table's events, those still in the feed (it is
   trimmed below the projections' checkpoints): each must be the stream's event at its
   version, byte for byte (``services/audit/feed.py``);
4. every deal commitment (the revealed salt and order hash to the commitment published
   before bidding, and the order is the one dealt);
5. that replaying the stream through the domain yields what is stored: each command's
   events are re-derived by ``decide`` from the command they record, and must be equal,
   byte for byte, to the stored ones (trick winners, scores, everything).

Only every ``HASH_EVERY``-th entry (an anchor) stores its hash; the others' are derived
from the entry before (docs/store.md, "The stored entry"). So an entry edited between two
anchors does not break the chain where it lies: the next stored hash no longer matches
(the edit lies among the entries since the last stored hash that did), or, past the last
anchor, the meta's head hash. And an anchor must store its hash.

The finding reported is the first bad entry: where the chain breaks, if it does (the other
checks judge the stream against itself, so they wait for a stream that holds together),
but where a stored hash proves only that one of the entries since the last matching one
was changed: there a finding of the feed or the replay among those entries is the first
entry proven bad; else the lowest version any of checks 2-5 names (at one version, in
that order).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
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
    TableState,
    deal_commitment,
    decide,
    evolve,
    initial_state,
)
from domain.upcasting import as_recorded
from services.audit.feed import check_table_feed
from services.audit.recorded import command_of
from services.store.base import (
    GENESIS,
    HASH_EVERY,
    HASH_V1,
    HASH_V2,
    FeedEntry,
    Head,
    StoredEvent,
    is_anchor,
    one_append,
    stored_hash,
)

# The stored form of every game's deal event's tag: a hand is counted without decoding.
_DEAL_TAGS: Final = tuple(f'"type":"{game.deal_type.__struct_config__.tag}"'.encode() for game in GAMES.values())


@dataclass(frozen=True)
class Finding:
    version: int
    problem: str
    # where a stored hash (an anchor's, or the meta's head) does not match the chain: the
    # first of the entries the edit lies among (the one after the last stored hash that
    # matched); None when the finding is about its own entry
    since: int | None = None

    def among(self, other: Finding | None) -> bool:
        """Whether ``other`` names one of the entries this finding says the edit lies among."""
        return other is not None and self.since is not None and self.since <= other.version <= self.version


@dataclass(frozen=True)
class Verdict:
    table_id: str
    events: int
    hands: int
    finding: Finding | None

    @property
    def ok(self) -> bool:
        return self.finding is None


def command_groups(stored: list[StoredEvent]) -> Iterator[list[StoredEvent]]:
    """Consecutive events appended by one command (``one_append``)."""
    group: list[StoredEvent] = []
    for event in stored:
        if group and not one_append(group[0], event):
            yield group
            group = []
        group.append(event)
    if group:
        yield group


def verify_events(table_id: str, stored: list[StoredEvent], head: Head | None = None,
                  feed: Iterable[FeedEntry] | None = None) -> Verdict:
    """``stored`` (the table's whole stream) checked; with ``head``, against the table's
    meta; with ``feed``, against the table's entries the partition feed holds."""
    finding = check_chain(stored)
    if finding is None:  # the rest is judged against a stream that holds together
        found = [
            None if head is None else check_meta(stored, head),
            None if feed is None else _feed_finding(table_id, stored, feed),
            check_replay(table_id, stored),
        ]
        finding = first_of(found)
    elif finding.since is not None:  # a stored hash that does not match: which entry, if it can be proven
        found = [None if feed is None else _feed_finding(table_id, stored, feed), check_replay(table_id, stored)]
        finding = first_of([f for f in found if finding.among(f)]) or finding
    hands = 0
    for entry in stored:
        hands += any(tag in entry.data for tag in _DEAL_TAGS)
    return Verdict(table_id, len(stored), hands, finding)


def first_of(found: list[Finding | None]) -> Finding | None:
    """The finding of the lowest version (at one version, the first in ``found``)."""
    ranked = [(f.version, rank, f) for rank, f in enumerate(found) if f is not None]
    return min(ranked)[2] if ranked else None


def check_chain(stored: list[StoredEvent]) -> Finding | None:
    prev, newest, proven = GENESIS, HASH_V1, 0  # proven: the last entry whose stored hash matched
    for version, entry in enumerate(stored, start=1):
        finding = check_link(entry, version, prev, newest, proven)
        if finding is not None:
            return finding
        prev, newest = entry.hash, entry.hash_version
        proven = version if entry.hash_stored else proven
    return None


def check_link(entry: StoredEvent, version: int, prev: str, newest: int, proven: int) -> Finding | None:
    """One entry of the chain, expected at ``version`` after the hash ``prev`` of hash
    version ``newest``, ``proven`` being the last entry whose stored hash matched."""
    if entry.version != version:
        return Finding(entry.version, f"expected version {version}: an event is missing or out of order")
    if entry.prev_hash != prev:  # only a link an older entry stores can differ: the store derives the rest
        return Finding(version, "its previous-hash link does not match the event before it")
    if entry.hash_version not in (HASH_V1, HASH_V2):
        return Finding(version, f"it names hash version {entry.hash_version}, which this release does not know")
    if entry.hash_version < newest:
        return Finding(version, f"its hash version goes back from {newest} to {entry.hash_version}")
    if not entry.hash_stored and is_anchor(version):
        return Finding(version, f"it stores no hash, which every {HASH_EVERY}th event does: its hash was removed")
    if stored_hash(prev, entry) == entry.hash:
        return None
    if proven < version - 1:  # the hashes between were derived: any of those entries may be the one
        return Finding(version, f"the stored hash of event {version} does not match: one of events "
                                f"{proven + 1}–{version} was changed", since=proven + 1)
    return Finding(version, "its bytes or its command id do not match its hash: the entry was edited"
                   if entry.hash_version == HASH_V2 else
                   "its bytes do not match its hash: the event was edited")


def check_meta(stored: list[StoredEvent], head: Head) -> Finding | None:
    """The table's meta names the stream's last event (a stream whose chain holds, but
    whose last events were deleted or whose events were edited and re-chained, fails;
    so does one edited after its last stored hash)."""
    count = len(stored)
    if head.version < count:
        return Finding(head.version + 1, f"the stream goes on past version {head.version}, where the "
                                         "table's meta ends: events were added behind the store's back")
    proven = next((e.version for e in reversed(stored) if e.hash_stored), 0)
    return meta_finding(count, stored[-1].hash if stored else GENESIS, proven, head)


def meta_finding(count: int, last: str, proven: int, head: Head) -> Finding | None:
    """A stream of ``count`` events ending at hash ``last`` (``proven``: its last entry
    whose stored hash matched) against the meta's ``head``, which is not before its end:
    the last events deleted, or its head hash another."""
    if head.version > count:
        return Finding(count + 1, f"the table's meta says version {head.version}, its stream ends at "
                                  f"{count}: the last events were deleted")
    if head.version == count and head.hash != last:
        if proven < count:  # the last hashes were derived: one of those entries may be the one
            return Finding(count, f"the table's meta head hash is not the stream's last hash: one of events "
                                  f"{proven + 1}–{count} was changed, or the stream was edited and its "
                                  "chain recomputed", since=proven + 1)
        return Finding(count, "the table's meta head hash is not the stream's last hash: the stream "
                              "was edited and its chain recomputed")
    return None


def _feed_finding(table_id: str, stored: list[StoredEvent], feed: Iterable[FeedEntry]) -> Finding | None:
    found = check_table_feed(table_id, stored, feed)
    return None if found is None else Finding(found.version, found.problem)


def check_replay(table_id: str, stored: list[StoredEvent]) -> Finding | None:
    state = initial_state(table_id)
    commitments: dict[int, tuple[str, tuple[str, ...]]] = {}
    for group in command_groups(stored):
        events: list[TableEvent] = []
        for entry in group:
            try:
                events.append(decode_event(entry.data))
            except (msgspec.DecodeError, msgspec.ValidationError) as error:
                # the event itself, not its command's first (one command may append several)
                return Finding(entry.version, f"does not decode as an event: {error}")
        state, finding = replay_command(state, group, events, commitments)
        if finding:
            return finding
    return None


def replay_command(state: TableState, group: list[StoredEvent], events: list[TableEvent],
                   commitments: dict[int, tuple[str, tuple[str, ...]]]) -> tuple[TableState, Finding | None]:
    """One command's events against the rules: the command they record decided on
    ``state`` must give them (as read today: an old stream's events are upcast, and a fact
    added since one was stored is not compared, domain/upcasting.py), each deal must keep
    its commitment; the table after them, or the first finding."""
    first = group[0].version
    recorded = command_of(events)
    if recorded is None:
        return state, Finding(first, f"a {type(events[0]).__name__} cannot start a command")
    command, player = recorded
    try:
        derived = decide(state, Submission(command=command, player=player))
    except MightyError as error:
        return state, Finding(first, f"the rules refuse the command it records: {error.code}: {error.message}")
    except Exception as error:  # noqa: BLE001 - a forged stream may break what the rules assume
        return state, Finding(first, f"the rules cannot decide the command it records: {_short(error)}")
    derived = [as_recorded(d, e) for d, e in zip(derived, events, strict=False)] + derived[len(events):]
    if derived != events:
        return state, Finding(_first_difference(group, events, derived), "it differs from what the rules derive")
    for event in events:
        finding = _check_commitment(event, first, commitments)
        if finding:
            return state, finding
        try:
            state = evolve(state, event)
        except Exception as error:  # noqa: BLE001 - as above
            return state, Finding(first, f"the table cannot take the event: {_short(error)}")
    return state, None


def _short(error: Exception) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= 120 else text[:117] + "..."


def _first_difference(group: list[StoredEvent], events: list[TableEvent], derived: list[TableEvent]) -> int:
    for stored, event, expected in zip(group, events, derived, strict=False):
        if event != expected:
            return stored.version
    if len(group) > len(derived):  # the first stored event the rules do not derive
        return group[len(derived)].version
    return group[-1].version + 1  # the first derived event the stream lacks


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

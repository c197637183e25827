"""The audit routes at any size: ``verify``, ``hands`` and a hand's file read from the
table's audit checkpoint on (``services/audit/checkpoint.py``), never the whole stream.

A call reads the events after the table's checkpoint in slices of ``SLICE`` events,
checks them and folds the hand index, and stores the new checkpoint (the last hand
boundary it passed with every check holding): the next call starts there, so a table's
audit costs one hand and what was appended since. The first call on a long table that
has no checkpoint yet works for ``BUDGET_S`` at most, stores how far it got and answers
503 ``unavailable`` with ``Retry-After``; its retries go on from there. A hand file reads
only that hand's events (its deal to the next deal), found in the hand index.

One audit a table at a time in this process: a second call waits for the first and
starts from the checkpoint it stored (two gateways may both work on one table: each
stores a checkpoint of events it checked, so either is right; the later one stands).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Final

from services.audit.checkpoint import Audit, HandEntry, decode_checkpoint, encode_checkpoint
from services.audit.verify import Finding
from services.gateway import audit as table_audit
from services.gateway.backend import Backend
from services.gateway.errors import ApiError
from services.gateway.wire import Deal, HandSummary, Verified
from services.i18n.catalogs import DEFAULT
from services.store.base import StoredEvent
from services.store.record import BadRecord

SLICE: Final = 5000  # events read and checked at a time
BUDGET_S: Final = 2.0  # the work one call does on a table behind its checkpoint, at most
RETRY_AFTER_S: Final = 1


class AuditReads:
    """The audit routes' reads over a backend (one per app)."""

    def __init__(self, backend: Backend, *, slice_events: int = SLICE, budget_s: float = BUDGET_S) -> None:
        self.backend = backend
        self.slice_events = slice_events
        self.budget_s = budget_s
        self._locks: dict[str, asyncio.Lock] = {}

    async def audit(self, table_id: str) -> Audit:
        """The table's audit, up to the end of its stream (``unknown_table`` when it has
        none; 503 ``unavailable`` when the work left is over this call's budget)."""
        lock = self._locks.setdefault(table_id, asyncio.Lock())
        try:
            async with lock:
                return await self._catch_up(table_id)
        finally:
            if not lock.locked() and self._locks.get(table_id) is lock and not lock._waiters:  # noqa: SLF001
                del self._locks[table_id]

    async def _catch_up(self, table_id: str) -> Audit:
        backend = self.backend
        start = decode_checkpoint(await backend.audit_checkpoint(table_id))
        audit = Audit(table_id, start)
        after = start.version
        began = time.monotonic()
        while True:
            try:
                events = await backend.events(table_id, after, after + self.slice_events)
            except BadRecord as unreadable:  # tampered with, or a later release's: verify names it
                audit.chain = audit.chain or Finding(unreadable.version, unreadable.problem_text)
                return audit
            complete = len(events) < self.slice_events
            await asyncio.to_thread(audit.take, events, complete)
            if events:
                after = events[-1].version
            if complete:
                break
            if time.monotonic() - began > self.budget_s:
                await self._save(table_id, audit)
                raise ApiError("unavailable", f"Table {table_id}'s audit is being brought up to date "
                               f"({after} events checked so far); retry in {RETRY_AFTER_S} s.",
                               headers={"Retry-After": str(RETRY_AFTER_S)})
        if audit.events == 0:
            raise ApiError("unknown_table", f"There is no table {table_id}.")
        await self._save(table_id, audit)
        return audit

    async def _save(self, table_id: str, audit: Audit) -> None:
        if audit.saved.version > audit.start.version:
            await self.backend.save_audit_checkpoint(table_id, encode_checkpoint(audit.saved))

    async def verify(self, table_id: str) -> Verified:
        head = await self.backend.head(table_id)  # first: the stream then holds at least this much
        audit = await self.audit(table_id)
        finding = audit.finding or audit.against(head)
        return Verified(ok=finding is None, events=audit.events, problem=None if finding is None else finding.problem,
                        hands=audit.deals, version=None if finding is None else finding.version)

    async def hands(self, table_id: str) -> list[HandSummary]:
        audit = await self.audit(table_id)
        return [HandSummary(hand=h.hand, status=h.status, scores=h.scores)  # type: ignore[arg-type]
                for h in audit.hands]

    async def hand_events(self, table_id: str, hand: int) -> list[StoredEvent]:
        """Hand ``hand``'s events (numbered from 1): its deal to the event before the next
        deal, or to the stream's end."""
        if hand < table_audit.FIRST_HAND:
            raise ApiError("unknown_hand", f"Hands are numbered from {table_audit.FIRST_HAND}, not {hand}.")
        hands = (await self.audit(table_id)).hands
        if not hands:
            raise ApiError("unknown_hand", f"table {table_id} has dealt no hand")
        found = _entry(hands, hand)
        if found is None:
            raise ApiError("unknown_hand", f"table {table_id} has no hand {hand - table_audit.FIRST_HAND}")
        index, entry = found
        last = hands[index + 1].first - 1 if index + 1 < len(hands) else None
        return await self.backend.events(table_id, entry.first - 1, last)

    async def hand_file(self, table_id: str, hand: int) -> dict[str, Any]:
        stored = await self.hand_events(table_id, hand)
        return await asyncio.to_thread(table_audit.hand_file, table_id, stored, hand)

    async def replay(self, table_id: str, hand: int, reader: str,
                     lang: str = DEFAULT) -> tuple[list[dict[str, Any]], Deal | None]:
        stored = await self.hand_events(table_id, hand)
        document = await asyncio.to_thread(table_audit.hand_file, table_id, stored, hand)
        steps = await asyncio.to_thread(table_audit.replay_steps, document, reader, lang)
        return steps, table_audit.revealed_deal(stored, hand)


def _entry(hands: list[HandEntry], hand: int) -> tuple[int, HandEntry] | None:
    for index, entry in enumerate(hands):
        if entry.hand == hand:
            return index, entry
    return None

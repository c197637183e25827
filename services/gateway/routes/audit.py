"""Audit and replay (docs/api.md, "Audit and replay"): hands, hand files, replays, verify, the ledger."""

from __future__ import annotations

from typing import Annotated, Any

import structlog
from litestar import Controller, Request, get
from litestar.params import FromPath, QueryParameter

from services.gateway import audit as table_audit
from services.gateway.deps import (
    AuditReadsDep,
    BackendDep,
    reader_lang,
    table_id_of,
)
from services.gateway.errors import ApiError
from services.gateway.wire import (
    Hands,
    Ledger,
    LedgerLine,
    Replay,
    Verified,
)

log = structlog.get_logger("mighty.gateway")


class AuditController(Controller):
    """A table's hands, replays, verification and ledger."""

    path = "/tables/{table:str}"

    @get("/hands", summary="The table's hands")
    async def list_hands(self, audit_reads: AuditReadsDep, table: FromPath[str]) -> Hands:
        return Hands(hands=await audit_reads.hands(table_id_of(table)))

    @get("/hands/{n:int}", summary="A hand file, once the hand has ended")
    async def get_hand(self, audit_reads: AuditReadsDep, table: FromPath[str], n: FromPath[int]) -> dict[str, Any]:
        return await audit_reads.hand_file(table_id_of(table), n)

    @get("/hands/{n:int}/replay", summary="A hand step by step as a reader saw it")
    async def replay_hand(self, audit_reads: AuditReadsDep, request: Request[Any, Any, Any], table: FromPath[str], n: FromPath[int],
                          as_: Annotated[str, QueryParameter(name="as", description="a seat, spectator or audit")] = "spectator") -> Replay:
        steps, deal = await audit_reads.replay(table_id_of(table), n, as_, await reader_lang(request))
        return Replay(steps=steps, deal=deal)

    @get("/verify", summary="Check the table's hash chain, deals and replay")
    async def verify_table(self, audit_reads: AuditReadsDep, table: FromPath[str]) -> Verified:
        return await audit_reads.verify(table_id_of(table))

    @get("/ledger", summary="The table's scores, hand by hand")
    async def get_ledger(self, backend: BackendDep, table: FromPath[str]) -> Ledger:
        table_id = table_id_of(table)
        ledger = await backend.ledger(table_id)
        if ledger is None:
            if (await backend.state(table_id))[0].status == "new":
                raise ApiError("unknown_table", f"There is no table {table_id}.")
            return Ledger(hands=[], totals=[])
        lines = [LedgerLine(hand=table_audit.api_hand(line.hand_no), scores=list(line.scores)) for line in ledger.hands]
        return Ledger(hands=lines, totals=list(ledger.totals))

"""The lobby (docs/api.md, "The lobby"): each route calls a use case of ``services/app/``."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
import structlog
from litestar import Controller, Request, get, post
from litestar.params import FromPath, JSONBody, QueryParameter

from services.app import lifecycle, seats, tables
from services.app import quickplay as quick
from services.app import rematch as rematches
from services.app.invites import check_invite, invite_code, shown_invite
from services.gateway import (
    deadline,
    pages,
    quotas,
)
from services.gateway.deps import (
    BackendDep,
    Caller,
    SettingsDep,
    Viewer,
    needs_player,
    table_id_of,
)
from services.gateway.errors import ApiError
from services.gateway.names import TABLE_NAME_MAX, name_problem
from services.gateway.wire import (
    Joined,
    JoinRequest,
    NewTable,
    Quickplay,
    Seated,
    Table,
    Tables,
)

log = structlog.get_logger("mighty.gateway")


class TablesController(Controller):
    """Tables: listed, created, read, joined, left, closed, played again."""

    path = "/tables"

    @get("/", summary="The lobby: tables from the directory")
    async def list_tables(self, backend: BackendDep, status: Annotated[str | None, QueryParameter(description="open, playing or finished")] = None,
        game: Annotated[str | None, QueryParameter(description="a rule set name, e.g. mighty-5")] = None,
        limit: Annotated[int, QueryParameter(description=f"tables a page holds at most (1..{pages.MAX_LIMIT})")]
        = pages.DEFAULT_LIMIT,
        cursor: Annotated[str | None, QueryParameter(description="the cursor of the page before")] = None) -> Tables:
        if status is not None and status not in ("open", "playing", "finished"):
            raise ApiError("invalid_request", f"status is open, playing or finished, not {status[:40]!r}.")
        entries, after = await pages.page(
            backend, lambda e: e.private is not True  # a private table is listed to nobody
            and (status is None or tables.status_of(e) == status)
            and (game is None or tables.game_of_entry(e) == game),
            pages.check_limit(limit), cursor, finished=None if status is None else status == "finished")
        return Tables(tables=await tables.tables_of(backend, entries), cursor=after)

    @post("/", status_code=201, summary="Create a table", guards=[needs_player])
    async def create_table(self, backend: BackendDep, settings: SettingsDep, caller: Caller, request: Request[Any, Any, Any], data: JSONBody[NewTable]) -> Table:
        wrong = name_problem(data.name, TABLE_NAME_MAX) if data.name else None  # "": the table's id
        if wrong:
            raise ApiError("invalid_request", f"Not a table's name: {wrong}.")
        await quotas.admit_table(backend, settings, quotas.client_address(request), caller)
        if data.seat is None:
            made = await tables.create_table(backend, caller, data)
        else:
            table_id = tables.new_table_id()
            async with quotas.seat_for(backend, settings, caller, table_id):
                made = await tables.create_table(backend, caller, data, table_id=table_id)
        # the creator's Table holds a private table's invite code (services/app/invites.py)
        return msgspec.structs.replace(made, invite=invite_code(await backend.secret(), made.table)) \
            if made.private else made

    @get("/{table:str}", summary="One table")
    async def get_table(self, backend: BackendDep, viewer: Viewer, table: FromPath[str]) -> Table:
        entry = await backend.entry(table_id_of(table))
        if entry is None:
            raise ApiError("unknown_table", f"There is no table {table}.")
        shown = await tables.table_of(backend, entry)
        if shown.private and entry.created_by is not None and viewer == entry.created_by:
            state, _ = await backend.state(entry.table_id)
            code = shown_invite(await backend.secret(), entry.table_id, state.invite_hash)
            shown = msgspec.structs.replace(shown, invite=code)
        return shown

    @post("/{table:str}/join", status_code=200, summary="Take a seat", guards=[needs_player])
    async def join_table(self, backend: BackendDep, settings: SettingsDep, caller: Caller, table: FromPath[str], data: JSONBody[JoinRequest | None] = None) -> Joined:
        table_id = table_id_of(table)
        wanted = data.seat if data else None
        kept = await seats.kept_seat(backend, table_id, caller, wanted)  # a rematch's seats are its players'
        if kept is None:  # a private table: its invite code (a kept seat needs none)
            check_invite((await backend.state(table_id))[0], caller, data.invite if data else None)
        async with quotas.seat_for(backend, settings, caller, table_id):
            seat = await seats.join(backend, table_id, caller, wanted if kept is None else kept)
        return Joined(seat=seat)

    @post("/{table:str}/leave", status_code=204, summary="Leave a seat", guards=[needs_player])
    async def leave_table(self, backend: BackendDep, caller: Caller, table: FromPath[str]) -> None:
        table_id = table_id_of(table)
        await seats.leave(backend, table_id, caller)
        cached = backend.cached(table_id)
        if cached is None or caller not in cached[0].seats:  # freed (an open table): no seat held there
            await backend.drop_seats(caller, [table_id])

    @post("/{table:str}/close", status_code=204, summary="Close a table that has not started (its creator)", guards=[needs_player])
    async def close_table(self, backend: BackendDep, caller: Caller, table: FromPath[str]) -> None:
        await lifecycle.close(backend, table_id_of(table), caller)

    @post("/{table:str}/rematch", status_code=200, summary="The same game again", guards=[needs_player])
    async def rematch(self, backend: BackendDep, settings: SettingsDep, caller: Caller, table: FromPath[str]) -> Table:
        async with quotas.seat_for(backend, settings, caller) as hold:
            made = await rematches.rematch(backend, table_id_of(table), caller)
            hold.at(made.table if any(s.player == caller for s in made.seats) else None)
        return made


class QuickplayController(Controller):
    """Being seated with others waiting for the same game."""

    path = "/quickplay"

    @post("/", status_code=200, summary="Be seated with others waiting for the same game", guards=[needs_player])
    async def quickplay(self, backend: BackendDep, settings: SettingsDep, caller: Caller, request: Request[Any, Any, Any], data: JSONBody[Quickplay]) -> Seated:
        # the wait is the caller's, not the store's; so is the time to be seated among many
        deadline.extend(request, data.wait_seconds + quick.QUICKPLAY_SEATING_S)
        await quotas.admit_quickplay(backend, settings, quotas.client_address(request), caller)
        async with quotas.seat_for(backend, settings, caller) as hold:
            table_id, seat = await quick.quickplay(backend, caller, data.game, data.wait_seconds)
            hold.at(table_id)
        return Seated(table=table_id, seat=seat)

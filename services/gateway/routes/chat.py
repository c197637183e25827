"""A table's chat and the caller's mutes (docs/api.md, "Chat"; services/gateway/chat.py)."""

from __future__ import annotations

from typing import Annotated

import structlog
from litestar import Controller, delete, get, post
from litestar.params import FromPath, JSONBody, QueryParameter

from services.gateway import chat as chat
from services.gateway.chat import ChatMessages, ChatPosted, ChatRequest, MuteRequest, Mutes
from services.gateway.deps import (
    BackendDep,
    Caller,
    Viewer,
    needs_player,
    table_id_of,
)
from services.gateway.errors import ApiError
from services.gateway.routes.play import reader_of

log = structlog.get_logger("mighty.gateway")


class ChatController(Controller):
    """A table's chat."""

    path = "/tables/{table:str}/chat"

    @post("/", status_code=201, summary="Say something at the table (a player or a spectator)", guards=[needs_player])
    async def post_chat(self, backend: BackendDep, caller: Caller, table: FromPath[str], data: JSONBody[ChatRequest]) -> ChatPosted:
        table_id = table_id_of(table)
        text, phrase = chat.checked(data, backend.chat.limits)
        await reader_of(backend, table_id, None)  # the table exists
        record = (await backend.players([caller])).get(caller)
        await backend.chat.admit(caller, text, phrase, backend.count_quota)
        message_id = await backend.chat.append(table_id, caller, record.name if record else caller, text, phrase)
        return ChatPosted(id=message_id, at=chat.at_of(message_id))

    @get("/", summary="The table's chat, less the players the caller muted")
    async def get_chat(self, backend: BackendDep, viewer: Viewer, table: FromPath[str],
                       after: Annotated[str | None, QueryParameter(description="the last message id seen")] = None) -> ChatMessages:
        caller = viewer
        table_id = table_id_of(table)
        cursor = chat.check_after(after)
        await reader_of(backend, table_id, None)
        return ChatMessages(messages=await backend.chat.messages(table_id, caller, cursor),
                            text_max=backend.chat.limits.text_max)


class MutesController(Controller):
    """The players the caller muted."""

    path = "/mutes"

    @post("/", status_code=204, summary="Mute a player's chat for oneself", guards=[needs_player])
    async def mute_player(self, backend: BackendDep, caller: Caller, data: JSONBody[MuteRequest]) -> None:
        if data.player == caller:
            raise ApiError("invalid_request", "You cannot mute yourself.")
        if data.player not in await backend.players([data.player]):
            raise ApiError("unknown_player", f"There is no player {data.player[:64]!r}.")
        await backend.chat.mute(caller, data.player)

    @delete("/{player:str}", status_code=204, summary="Hear a muted player again", guards=[needs_player])
    async def unmute_player(self, backend: BackendDep, caller: Caller, player: FromPath[str]) -> None:
        await backend.chat.unmute(caller, player[:64])

    @get("/", summary="The players the caller muted", guards=[needs_player])
    async def list_mutes(self, backend: BackendDep, caller: Caller) -> Mutes:
        return Mutes(players=await backend.chat.mutes(caller))

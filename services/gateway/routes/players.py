"""Players (docs/api.md, "Players"): a guest's creation, a player's record, the caller's settings."""

from __future__ import annotations

import time
from typing import Any

import structlog
from litestar import Controller, Request, get, patch, post
from litestar.params import FromPath, JSONBody

from services.gateway import (
    quotas,
    tokens,
)
from services.gateway.deps import (
    BackendDep,
    Caller,
    SettingsDep,
    needs_player,
    note,
)
from services.gateway.errors import ApiError
from services.gateway.names import PLAYER_NAME_MAX, name_problem
from services.gateway.ratings import rating_out, reputation_out
from services.gateway.wire import (
    Contracts,
    Me,
    NewPlayer,
    PlayerCreated,
    PlayerSettings,
    PlayerStats,
)
from services.i18n.catalogs import LANGS
from services.i18n.negotiate import supported

log = structlog.get_logger("mighty.gateway")


class PlayersController(Controller):
    """A player's record and the caller's own settings."""

    path = "/players"

    @post("/", status_code=201, summary="Create a guest player")
    async def create_player(self, backend: BackendDep, settings: SettingsDep, request: Request[Any, Any, Any], data: JSONBody[NewPlayer]) -> PlayerCreated:
        wrong = name_problem(data.name, PLAYER_NAME_MAX)
        if wrong:
            raise ApiError("invalid_request", f"Not a player's name: {wrong}.")
        await quotas.admit_player(backend, settings, quotas.client_address(request))
        record = await backend.create_player(data.name)
        expires = int(time.time()) + settings.token_ttl_s
        token = tokens.issue(await backend.secret(), record.player, expires)
        note(request, player=record.player)
        return PlayerCreated(player=record.player, name=record.name, token=token)

    @get("/{player:str}", summary="A player's name and record")
    async def get_player(self, backend: BackendDep, player: FromPath[str]) -> PlayerStats:
        found = (await backend.players([player])).get(player) if len(player) <= 64 else None
        if found is None:
            raise ApiError("unknown_player", f"There is no player {player[:64]!r}.")
        ledger = await backend.player_ledger(player)
        hands, total, declared, made = (0, 0, 0, 0) if ledger is None else (
            ledger.hands, ledger.total, ledger.declared, ledger.made)
        ratings, reputation = await backend.player_ratings(player)
        return PlayerStats(player=player, name=found.name, hands=hands, total=total,
                           contracts=Contracts(made=made, failed=declared - made), bot=found.bot,
                           ratings={rules: rating_out(r) for rules, r in sorted(ratings.items())},
                           reputation=reputation_out(reputation))

    @get("/me", summary="The caller's player and settings", guards=[needs_player])
    async def get_me(self, backend: BackendDep, caller: Caller) -> Me:
        found = (await backend.players([caller])).get(caller)
        if found is None:
            raise ApiError("unknown_player", f"There is no player {caller!r}.")
        return Me(player=caller, name=found.name, lang=found.lang)

    @patch("/me", summary="Change the caller's settings: its language", guards=[needs_player])
    async def patch_me(self, backend: BackendDep, caller: Caller, data: JSONBody[PlayerSettings]) -> Me:
        if supported(data.lang) is None:
            raise ApiError("invalid_request", f"lang is one of {', '.join(LANGS)}.")
        found = (await backend.players([caller])).get(caller)
        if found is None:
            raise ApiError("unknown_player", f"There is no player {caller!r}.")
        await backend.set_player_lang(caller, data.lang)
        return Me(player=caller, name=found.name, lang=data.lang)

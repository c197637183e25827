"""What a route is given rather than fetches (docs/gateway.md, "Routes"): Litestar's
dependency injection (``Provide``) hands each route the ``backend``, the ``settings``,
the app's ``audit_reads``, and the caller: ``caller`` on a route guarded by
``needs_player`` (a Guard: 401 ``unauthorized`` without a valid token, before the route
runs), ``viewer`` (the player of a valid token, or None) elsewhere.

A token is signed, unexpired and its session not ended (services/gateway/accounts.py);
a player found by it keeps its record from expiring, and their language setting is the
request's unless it names one (services/gateway/language.py).
"""

from __future__ import annotations

import contextlib
from typing import Any, Final

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.handlers import BaseRouteHandler
from litestar.params import SkipValidation
from litestar.types import Scope

from domain.errors import MightyError
from services.gateway import accounts, language
from services.gateway.audit_reads import AuditReads
from services.gateway.backend import Backend
from services.gateway.errors import ApiError
from services.gateway.tokens import Bearer
from services.settings import Settings
from services.store.keys import check_table_id

CALLER_KEY: Final = "mighty_caller"  # the guarded route's player, in its scope

# A route's injected parameters, named so in its signature (``DEPENDENCIES``); given, not
# validated (a protocol, the app's own objects)
BackendDep = NamedDependency[SkipValidation[Backend]]
SettingsDep = NamedDependency[SkipValidation[Settings]]
AuditReadsDep = NamedDependency[SkipValidation[AuditReads]]
Caller = NamedDependency[str]  # on a route guarded by ``needs_player``
Viewer = NamedDependency[str | None]  # any route: a token's player, or None


def backend_in(connection: ASGIConnection[Any, Any, Any, Any]) -> Backend:
    """The app's backend, for what runs outside a route's signature (the stream's tasks)."""
    backend: Backend = connection.app.state.backend
    return backend


def settings_in(connection: ASGIConnection[Any, Any, Any, Any]) -> Settings:
    settings: Settings = connection.app.state.settings
    return settings


def note(connection: ASGIConnection[Any, Any, Any, Any], **fields: Any) -> None:
    """Fields for this request's log line (the logging middleware writes it)."""
    connection.scope.setdefault("mighty_log", {}).update(fields)  # type: ignore[typeddict-item]


async def bearer_of(connection: ASGIConnection[Any, Any, Any, Any], backend: Backend, token: str | None) -> Bearer:
    """Who ``token`` speaks for (``accounts.authenticate``), noted for the request's log line."""
    bearer = await accounts.authenticate(backend, token)
    note(connection, player=bearer.player)
    return bearer


async def player_of_token(connection: ASGIConnection[Any, Any, Any, Any], token: str | None) -> str:
    """The player of ``token``; 401 ``unauthorized`` for none or a bad one. (A guard runs
    before the route's dependencies are made: it takes the backend from the app's state.)"""
    backend = backend_in(connection)
    player = (await bearer_of(connection, backend, token)).player
    await backend.touch_players([player])  # a record in use does not expire
    if language.asked(connection) is None:  # the player's setting, unless the request names a language
        language.note_setting(connection, await backend.player_lang(player))
    return player


async def needs_player(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """The Guard of every route that acts as a player: the bearer token's player, kept
    for the route's ``caller``."""
    connection.scope[CALLER_KEY] = await player_of_token(connection, accounts.header_token(connection))  # type: ignore[typeddict-unknown-key]


def _caller(scope: Scope) -> str:
    found: object = scope.get(CALLER_KEY)
    if not isinstance(found, str):  # a route that asks for ``caller`` without the guard
        raise RuntimeError("caller is given to routes guarded by needs_player only")
    return found


async def _viewer(request: Request[Any, Any, Any]) -> str | None:
    """The player of the request's token, if it has one (a bad one is refused)."""
    token = accounts.header_token(request)
    return None if token is None else await player_of_token(request, token)


async def reader_lang(request: Request[Any, Any, Any]) -> str:
    """The reader's language on a route that needs no token: a valid token's player's
    setting counts; a bad token is no refusal here."""
    if language.asked(request) is None and request.headers.get("authorization"):
        with contextlib.suppress(ApiError):
            await _viewer(request)
    return language.of(request)


def table_id_of(table: str) -> str:
    """A table id from a path; 404 ``unknown_table`` for one no table can have."""
    try:
        return check_table_id(table)
    except MightyError:
        raise ApiError("unknown_table", f"There is no table {table[:64]!r}.") from None


def _backend(state: State) -> Backend:
    backend: Backend = state.backend
    return backend


def _settings(state: State) -> Settings:
    settings: Settings = state.settings
    return settings


def _audit_reads(state: State) -> AuditReads:
    """The app's audit reads (checkpointed: services/gateway/audit_reads.py), made again
    for a backend that changed."""
    reads: AuditReads | None = getattr(state, "audit_reads", None)
    if reads is None or reads.backend is not state.backend:
        reads = state.audit_reads = AuditReads(state.backend)
    return reads


DEPENDENCIES: Final = {
    "backend": Provide(_backend, sync_to_thread=False),
    "settings": Provide(_settings, sync_to_thread=False),
    "audit_reads": Provide(_audit_reads, sync_to_thread=False),
    "caller": Provide(_caller, sync_to_thread=False),
    "viewer": Provide(_viewer),
}

"""The gateway's routes (docs/api.md, as docs/gateway.md tells it), built as a
Litestar app over a ``Backend``.

``create_app(settings, backend)`` is the whole server: the routes, the refusals in one
place (``errors.py``), the body limit, CORS, the per-player rate limit, one log line per
request and per command, Prometheus metrics and the OpenAPI document generated from the
msgspec types of ``wire.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

import msgspec
import redis
import structlog
from litestar import Litestar, Request, Response, Router, delete, get, patch, post
from litestar.config.cors import CORSConfig
from litestar.connection import ASGIConnection, WebSocket
from litestar.datastructures import State
from litestar.exceptions import WebSocketDisconnect
from litestar.handlers import websocket
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter
from litestar.response.base import ASGIResponse
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from domain.errors import MightyError
from domain.table import TableState
from projections.views import ViewState, render
from services.app import commands as playing
from services.app import lifecycle, seats, tables
from services.app import quickplay as quick
from services.app import rematch as rematches
from services.app.invites import check_invite, invite_code, shown_invite
from services.bots.timers import deadline_of
from services.gateway import (
    accounts,
    labels,
    language,
    pages,
    presence,
    quotas,
    sockets,
    tokens,
)
from services.gateway import audit as table_audit
from services.gateway import chat as chat
from services.gateway.audit_reads import AuditReads
from services.gateway.backend import Backend
from services.gateway.bodies import MAX_BODY, deep_refusal, json_bodies, too_deep
from services.gateway.chat import ChatMessages, ChatPosted, ChatRequest, MuteRequest, Mutes
from services.gateway.collector import Collector
from services.gateway.errors import EXCEPTION_HANDLERS, ApiError, as_api_error, problem
from services.gateway.memory_trace import MemoryTrace
from services.gateway.names import PLAYER_NAME_MAX, TABLE_NAME_MAX, name_problem
from services.gateway.ratings import get_leaderboard, rating_out, reputation_out
from services.gateway.sockets import SharedSockets, SocketCounts
from services.gateway.static import static_routers
from services.gateway.translations import native_name, translations
from services.gateway.views import api_view, decode_stored, document_of, needs_public, view_frame
from services.gateway.wire import (
    Accepted,
    CommandRequest,
    Contracts,
    Games,
    Hands,
    Health,
    Joined,
    JoinRequest,
    Language,
    Languages,
    Ledger,
    LedgerLine,
    Me,
    NewPlayer,
    NewTable,
    PlayerCreated,
    PlayerSettings,
    PlayerStats,
    Quickplay,
    Replay,
    Seated,
    Table,
    Tables,
    Translations,
    Verified,
    View,
)
from services.i18n.catalogs import DEFAULT, LANGS
from services.i18n.negotiate import supported
from services.settings import Settings
from services.store.errors import StoreError
from services.store.keys import check_table_id

log = structlog.get_logger("mighty.gateway")

# WebSocket close code 1013 (RFC 6455 registry: "Try Again Later"): the store is down or
# stalled; the client reconnects and resumes from its last version
TRY_AGAIN_LATER = 1013
MAX_FRAME = 16 * 1024  # a WebSocket frame (docs/api.md, "Playing")
# How long a command may wait for the store before it is answered 503 ``unavailable``; a
# request, one second longer (a command's own deadline goes first, counted as refused).
# Without it a Redis that stalls (stopped, swapping) held each call for the client's
# retries of its 5 s socket timeout: 35 s and more before any answer (docs/reliability.md).
STORE_DEADLINE_S = 3.0
# Outcomes of a command worth a line at info: a client held back by a limit. The rest
# (played, refused by the rules) is routine: a line at debug.
_NOTABLE_OUTCOMES = frozenset({"refused:rate_limited"})
_DEADLINE_KEY = "mighty_deadline"  # the request's deadline (an asyncio.Timeout) in its scope


# ---------------------------------------------------------------- metrics


class Metrics:
    """The gateway's Prometheus metrics, in a registry of its own (one per app)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.commands = Counter("mighty_commands", "Player commands by outcome", ["outcome"], registry=r)
        self.refusals = Counter("mighty_refusals", "Refused commands by code", ["code"], registry=r)
        self.latency = Histogram("mighty_command_seconds", "Time to handle a player's command",
                                 buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
                                 registry=r)
        self.lag = Gauge("mighty_projection_lag_seconds", "How far each projection is behind its feeds",
                         ["kind"], registry=r)
        self.sockets = Gauge("mighty_open_sockets", "Open WebSocket streams", registry=r)
        self.dead = Gauge("mighty_dead_letters", "Feed entries a projection kind could not decode or fold",
                          ["kind"], registry=r)
        self.requests = Counter("mighty_http_requests", "HTTP requests by status", ["status"], registry=r)
        # rollbacks (docs/reliability.md, "Rollback"): tables found holding less than this
        # gateway saw, and streams resumed from beyond their table's version
        self.rollbacks = Counter("mighty_rollbacks", "Tables found holding fewer events than this gateway "
                                 "had seen (writes lost: a power cut under everysec, a failover)", registry=r)
        self.stream_rollbacks = Counter("mighty_stream_rollbacks", "Streams resumed from a cursor beyond the "
                                        "table's version: sent the current view, marked rollback", registry=r)
        self._rollbacks_seen = 0
        # memory (docs/reliability.md, Soak): set at each scrape
        self.gc_runs = Gauge("mighty_gc_runs", "Full garbage collections run by the gateway's collector",
                             registry=r)
        self.gc_found = Gauge("mighty_gc_found_objects", "Unreachable objects the collector's runs found",
                              registry=r)
        self.gc_seconds = Gauge("mighty_gc_seconds", "Time the collector's runs took, in all", registry=r)
        self.cached_tables = Gauge("mighty_cached_tables", "Tables whose state the command path keeps, "
                                   "in play and closed", ["kind"], registry=r)

    def count_rollbacks(self, found: int) -> None:
        """Bring ``mighty_rollbacks_total`` to ``found``, the command path's own count."""
        if found > self._rollbacks_seen:
            self.rollbacks.inc(found - self._rollbacks_seen)
            self._rollbacks_seen = found


# ---------------------------------------------------------------- auth


def _backend(connection: ASGIConnection[Any, Any, Any, Any]) -> Backend:
    backend: Backend = connection.app.state.backend
    return backend


def _settings(connection: ASGIConnection[Any, Any, Any, Any]) -> Settings:
    settings: Settings = connection.app.state.settings
    return settings


def _note(connection: ASGIConnection[Any, Any, Any, Any], **fields: Any) -> None:
    """Fields for this request's log line (the logging middleware writes it)."""
    connection.scope.setdefault("mighty_log", {}).update(fields)  # type: ignore[typeddict-item]


async def _player_of_token(connection: ASGIConnection[Any, Any, Any, Any], token: str | None) -> str:
    # signed, unexpired and its session not ended (services/gateway/accounts.py)
    player = (await accounts.authenticate(connection, token)).player
    await _backend(connection).touch_players([player])  # a record in use does not expire
    if language.asked(connection) is None:  # the player's setting, unless the request names a language
        language.note_setting(connection, await _backend(connection).player_lang(player))
    return player


_bearer = accounts.header_token


async def player_required(request: Request[Any, Any, Any]) -> str:
    return await _player_of_token(request, _bearer(request))


async def player_optional(request: Request[Any, Any, Any]) -> str | None:
    token = _bearer(request)
    return None if token is None else await _player_of_token(request, token)


async def _reader_lang(request: Request[Any, Any, Any]) -> str:
    """The reader's language on a route that needs no token: a valid token's player's
    setting counts; a bad token is no refusal here."""
    if language.asked(request) is None and request.headers.get("authorization"):
        with contextlib.suppress(ApiError):
            await player_optional(request)
    return language.of(request)


def _table_id(table: str) -> str:
    try:
        return check_table_id(table)
    except MightyError:
        raise ApiError("unknown_table", f"There is no table {table[:64]!r}.") from None


# ---------------------------------------------------------------- players


@post("/players", status_code=201, summary="Create a guest player")
async def create_player(request: Request[Any, Any, Any], data: JSONBody[NewPlayer]) -> PlayerCreated:
    wrong = name_problem(data.name, PLAYER_NAME_MAX)
    if wrong:
        raise ApiError("invalid_request", f"Not a player's name: {wrong}.")
    backend = _backend(request)
    await quotas.admit_player(backend, _settings(request), quotas.client_address(request))
    record = await backend.create_player(data.name)
    expires = int(time.time()) + _settings(request).token_ttl_s
    token = tokens.issue(await backend.secret(), record.player, expires)
    _note(request, player=record.player)
    return PlayerCreated(player=record.player, name=record.name, token=token)


@get("/players/{player:str}", summary="A player's name and record")
async def get_player(request: Request[Any, Any, Any], player: FromPath[str]) -> PlayerStats:
    backend = _backend(request)
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


@get("/players/me", summary="The caller's player and settings")
async def get_me(request: Request[Any, Any, Any]) -> Me:
    caller = await player_required(request)
    found = (await _backend(request).players([caller])).get(caller)
    if found is None:
        raise ApiError("unknown_player", f"There is no player {caller!r}.")
    return Me(player=caller, name=found.name, lang=found.lang)


@patch("/players/me", summary="Change the caller's settings: its language")
async def patch_me(request: Request[Any, Any, Any], data: JSONBody[PlayerSettings]) -> Me:
    caller = await player_required(request)
    if supported(data.lang) is None:
        raise ApiError("invalid_request", f"lang is one of {', '.join(LANGS)}.")
    backend = _backend(request)
    found = (await backend.players([caller])).get(caller)
    if found is None:
        raise ApiError("unknown_player", f"There is no player {caller!r}.")
    await backend.set_player_lang(caller, data.lang)
    return Me(player=caller, name=found.name, lang=data.lang)


@get("/i18n", summary="The languages the service speaks", cache=3600)
async def list_languages() -> Languages:
    return Languages(languages=[Language(lang=lang, name=native_name(lang)) for lang in LANGS])


@get("/i18n/{lang:str}", summary="A language's catalog, for a client's own text", cache=3600)
async def get_translations(lang: FromPath[str]) -> Translations:
    if supported(lang) is None:
        raise ApiError("not_found", f"There is no language {lang[:16]!r}: one of {', '.join(LANGS)}.")
    return translations(lang)


# ---------------------------------------------------------------- lobby


@get("/games", summary="Every game a table can be created for, as a client shows it")
async def list_games(request: Request[Any, Any, Any]) -> Games:
    return labels.games(await _reader_lang(request))


@get("/tables", summary="The lobby: tables from the directory")
async def list_tables(
    request: Request[Any, Any, Any],
    status: Annotated[str | None, QueryParameter(description="open, playing or finished")] = None,
    game: Annotated[str | None, QueryParameter(description="a rule set name, e.g. mighty-5")] = None,
    limit: Annotated[int, QueryParameter(description=f"tables a page holds at most (1..{pages.MAX_LIMIT})")]
    = pages.DEFAULT_LIMIT,
    cursor: Annotated[str | None, QueryParameter(description="the cursor of the page before")] = None,
) -> Tables:
    if status is not None and status not in ("open", "playing", "finished"):
        raise ApiError("invalid_request", f"status is open, playing or finished, not {status[:40]!r}.")
    backend = _backend(request)
    entries, after = await pages.page(
        backend, lambda e: e.private is not True  # a private table is listed to nobody
        and (status is None or tables.status_of(e) == status)
        and (game is None or tables.game_of_entry(e) == game),
        pages.check_limit(limit), cursor, finished=None if status is None else status == "finished")
    return Tables(tables=await tables.tables_of(backend, entries), cursor=after)


@post("/tables", status_code=201, summary="Create a table")
async def create_table(request: Request[Any, Any, Any], data: JSONBody[NewTable]) -> Table:
    caller = await player_required(request)
    wrong = name_problem(data.name, TABLE_NAME_MAX) if data.name else None  # "": the table's id
    if wrong:
        raise ApiError("invalid_request", f"Not a table's name: {wrong}.")
    backend, settings = _backend(request), _settings(request)
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


@get("/tables/{table:str}", summary="One table")
async def get_table(request: Request[Any, Any, Any], table: FromPath[str]) -> Table:
    backend = _backend(request)
    entry = await backend.entry(_table_id(table))
    if entry is None:
        raise ApiError("unknown_table", f"There is no table {table}.")
    shown = await tables.table_of(backend, entry)
    if shown.private and entry.created_by is not None and await player_optional(request) == entry.created_by:
        state, _ = await backend.state(entry.table_id)
        code = shown_invite(await backend.secret(), entry.table_id, state.invite_hash)
        shown = msgspec.structs.replace(shown, invite=code)
    return shown


@post("/tables/{table:str}/join", status_code=200, summary="Take a seat")
async def join_table(request: Request[Any, Any, Any], table: FromPath[str], data: JSONBody[JoinRequest | None] = None) -> Joined:
    caller = await player_required(request)
    backend, table_id = _backend(request), _table_id(table)
    wanted = data.seat if data else None
    kept = await seats.kept_seat(backend, table_id, caller, wanted)  # a rematch's seats are its players'
    if kept is None:  # a private table: its invite code (a kept seat needs none)
        check_invite((await backend.state(table_id))[0], caller, data.invite if data else None)
    async with quotas.seat_for(backend, _settings(request), caller, table_id):
        seat = await seats.join(backend, table_id, caller, wanted if kept is None else kept)
    return Joined(seat=seat)


@post("/tables/{table:str}/leave", status_code=204, summary="Leave a seat")
async def leave_table(request: Request[Any, Any, Any], table: FromPath[str]) -> None:
    caller = await player_required(request)
    backend, table_id = _backend(request), _table_id(table)
    await seats.leave(backend, table_id, caller)
    cached = backend.cached(table_id)
    if cached is None or caller not in cached[0].seats:  # freed (an open table): no seat held there
        await backend.drop_seats(caller, [table_id])


@post("/tables/{table:str}/close", status_code=204, summary="Close a table that has not started (its creator)")
async def close_table(request: Request[Any, Any, Any], table: FromPath[str]) -> None:
    caller = await player_required(request)
    await lifecycle.close(_backend(request), _table_id(table), caller)


@post("/quickplay", status_code=200, summary="Be seated with others waiting for the same game")
async def quickplay(request: Request[Any, Any, Any], data: JSONBody[Quickplay]) -> Seated:
    caller = await player_required(request)
    # the wait is the caller's, not the store's; so is the time to be seated among many
    _extend_deadline(request, data.wait_seconds + quick.QUICKPLAY_SEATING_S)
    backend, settings = _backend(request), _settings(request)
    await quotas.admit_quickplay(backend, settings, quotas.client_address(request), caller)
    async with quotas.seat_for(backend, settings, caller) as hold:
        table_id, seat = await quick.quickplay(backend, caller, data.game, data.wait_seconds)
        hold.at(table_id)
    return Seated(table=table_id, seat=seat)


@post("/tables/{table:str}/rematch", status_code=200, summary="The same game again")
async def rematch(request: Request[Any, Any, Any], table: FromPath[str]) -> Table:
    caller = await player_required(request)
    backend = _backend(request)
    async with quotas.seat_for(backend, _settings(request), caller) as hold:
        made = await rematches.rematch(backend, _table_id(table), caller)
        hold.at(made.table if any(s.player == caller for s in made.seats) else None)
    return made


# ---------------------------------------------------------------- playing


async def _reader(backend: Backend, table_id: str, player: str | None) -> tuple[TableState, int, str]:
    state, version = await backend.state(table_id)
    if state.status == "new":
        raise ApiError("unknown_table", f"There is no table {table_id}.")
    if player is not None and player in state.seats:
        return state, version, str(state.seats.index(player))
    return state, version, "spectator"


async def _document(backend: Backend, table_id: str, stored: bytes, timed: bool = True,
                    lang: str = DEFAULT) -> dict[str, Any]:
    """The API's view document of a stored view, labelled in ``lang``; a closed table's
    compacted seat view gets its last hand from the spectator's (views.py). ``timed``: the
    table may have a turn deadline (created with ``turn_seconds``; only then is there one
    to read)."""
    doc = decode_stored(stored)
    public = await backend.view(table_id, "spectator") if needs_public(doc) else None
    document = document_of(doc, public, lang)
    if timed and document["to_act"] is not None and document["deadline"] is None:
        # a view stored before views held their deadline: the timer worker's document
        document["deadline"] = deadline_of(await backend.deadline(table_id), document["version"], document["to_act"])
    return document


@get("/tables/{table:str}/view", summary="The caller's view of the table")
async def get_view(request: Request[Any, Any, Any], table: FromPath[str]) -> Response[View]:
    caller = await player_optional(request)
    backend = _backend(request)
    table_id = _table_id(table)
    state, version, reader = await _reader(backend, table_id, caller)
    stored = await backend.view(table_id, reader)
    if stored is None or api_view(stored).version < version:
        # the views worker has not caught up with this table yet: the same view, rendered here
        stored = msgspec.json.encode(render(ViewState(table=state, version=version, name=""), reader))
    # the View fields over the game's own view of the hand: more than the schema names
    document: Any = await _document(backend, table_id, stored, lang=language.of(request))
    return Response(document)


async def _command(connection: ASGIConnection[Any, Any, Any, Any], table_id: str, player: str,
                   body: CommandRequest) -> int:
    """One player's command: the rate limit, the command path, the metrics, one log line."""
    settings = _settings(connection)
    metrics: Metrics = connection.app.state.metrics
    backend = _backend(connection)
    started = time.perf_counter()
    outcome = "ok"
    # a legal entry sent back as the view gave it: its ``label`` is the reader's text,
    # not part of the command (docs/api.md, "Games, labels and languages")
    command = {k: v for k, v in body.command.items() if k != "label"}
    kind = str(command.get("type"))[:32]
    noted: dict[str, Any] = {"seat": None}
    try:
        try:
            async with asyncio.timeout(STORE_DEADLINE_S):
                # counted once per command id: a retry is not counted again (quotas.py)
                await quotas.admit_command(backend, settings, player, table_id, body.id, command)
                version = await playing.play(backend, table_id, player, body.id, body.command, noted)
                cached = backend.cached(table_id)
                if cached is not None:  # a match played on keeps its players' records
                    await backend.touch_players([p for p in cached[0].seats if p is not None])
                return version
        except TimeoutError:
            raise _too_slow() from None
    except Exception as error:
        try:
            refused = as_api_error(error)
            outcome = f"refused:{refused.code}"
            if refused.status >= 500 and refused.code != "unavailable":  # the service's fault, not the player's
                log.error("command_failed", table=table_id, player=player, code=refused.code, message=refused.message)
        except TypeError:
            outcome = "error"
        raise
    finally:
        elapsed = time.perf_counter() - started
        metrics.latency.observe(elapsed)
        metrics.commands.labels(outcome.partition(":")[0]).inc()
        if outcome.startswith("refused:"):
            metrics.refusals.labels(outcome.partition(":")[2]).inc()
        # routine (played, or refused by the rules): debug; a limit reached: info
        write = log.info if outcome in _NOTABLE_OUTCOMES else log.debug
        write("player_command", table=table_id, seat=noted["seat"], player=player, command=kind, id=body.id,
              outcome=outcome, latency_ms=round(elapsed * 1000, 3))


@post("/tables/{table:str}/commands", status_code=200, summary="Send a command as the caller's seat")
async def post_command(request: Request[Any, Any, Any], table: FromPath[str], data: JSONBody[CommandRequest]) -> Accepted:
    caller = await player_required(request)
    return Accepted(version=await _command(request, _table_id(table), caller, data))


# ---------------------------------------------------------------- chat (services/gateway/chat.py)


@post("/tables/{table:str}/chat", status_code=201, summary="Say something at the table (a player or a spectator)")
async def post_chat(request: Request[Any, Any, Any], table: FromPath[str], data: JSONBody[ChatRequest]) -> ChatPosted:
    caller = await player_required(request)
    backend, table_id = _backend(request), _table_id(table)
    text, phrase = chat.checked(data, backend.chat.limits)
    await _reader(backend, table_id, None)  # the table exists
    record = (await backend.players([caller])).get(caller)
    await backend.chat.admit(caller, text, phrase, backend.count_quota)
    message_id = await backend.chat.append(table_id, caller, record.name if record else caller, text, phrase)
    return ChatPosted(id=message_id, at=chat.at_of(message_id))


@get("/tables/{table:str}/chat", summary="The table's chat, less the players the caller muted")
async def get_chat(request: Request[Any, Any, Any], table: FromPath[str],
                   after: Annotated[str | None, QueryParameter(description="the last message id seen")] = None,
                   ) -> ChatMessages:
    caller = await player_optional(request)
    backend, table_id = _backend(request), _table_id(table)
    cursor = chat.check_after(after)
    await _reader(backend, table_id, None)
    return ChatMessages(messages=await backend.chat.messages(table_id, caller, cursor),
                        text_max=backend.chat.limits.text_max)


@post("/mutes", status_code=204, summary="Mute a player's chat for oneself")
async def mute_player(request: Request[Any, Any, Any], data: JSONBody[MuteRequest]) -> None:
    caller = await player_required(request)
    backend = _backend(request)
    if data.player == caller:
        raise ApiError("invalid_request", "You cannot mute yourself.")
    if data.player not in await backend.players([data.player]):
        raise ApiError("unknown_player", f"There is no player {data.player[:64]!r}.")
    await backend.chat.mute(caller, data.player)


@delete("/mutes/{player:str}", status_code=204, summary="Hear a muted player again")
async def unmute_player(request: Request[Any, Any, Any], player: FromPath[str]) -> None:
    caller = await player_required(request)
    await _backend(request).chat.unmute(caller, player[:64])


@get("/mutes", summary="The players the caller muted")
async def list_mutes(request: Request[Any, Any, Any]) -> Mutes:
    caller = await player_required(request)
    return Mutes(players=await _backend(request).chat.mutes(caller))


_decode_frame = msgspec.json.Decoder(dict[str, Any]).decode


@websocket("/tables/{table:str}/stream")
async def stream(socket: WebSocket[Any, Any, Any], table: FromPath[str], after: FromQuery[int] = 0,
                 token: FromQuery[str | None] = None, chat_after: FromQuery[str | None] = None,
                 acked: FromQuery[int] = 0) -> None:
    """Push each change of the reader's view; take commands and pings (docs/api.md, "Playing").
    The gauge counts the socket from its first moment to its last: whatever ends it, the
    handler ends with it (``_stream``), and the pusher with the handler."""
    metrics: Metrics = socket.app.state.metrics
    metrics.sockets.inc()
    try:
        await _stream(socket, table, after, token, chat_after, acked)
    except Exception as error:
        if not sockets.is_disconnect(error):
            raise
    finally:
        metrics.sockets.dec()


async def _stream(socket: WebSocket[Any, Any, Any], table: str, after: int, token: str | None,
                  chat_after: str | None = None, acked: int = 0) -> None:
    settings = _settings(socket)
    await socket.accept()
    player: str | None = None
    lang = language.of(socket)
    try:
        player = None if token is None else await _player_of_token(socket, token)
        lang = language.of(socket)  # fixed for the socket's life: ?lang=, the player's setting, the header
        table_id = _table_id(table)
        chat_cursor = chat.check_after(chat_after)
        state, version, reader = await _reader(_backend(socket), table_id, player)
        # The reader saw more than the store holds: writes were lost (a rollback). It gets
        # the table as it is now, marked, rather than nothing until the table passes its cursor.
        # ``acked``: the last version one of its commands was acknowledged with, which it may
        # not have seen as a view yet (the power cut came between the ack and the view)
        seen = max(after, acked)
        behind = seen > version
        if behind:
            socket.app.state.metrics.stream_rollbacks.inc()
            log.debug("stream_behind_cursor", table=table_id, after=after, version=version)
        address, backend = quotas.client_address(socket), _backend(socket)
        shared: sockets.SharedSockets = socket.app.state.shared_sockets
        with socket.app.state.socket_counts.held(address, player) as release_here:
            socket_id = await shared.take(backend, address, player)  # every gateway's sockets

            def release() -> None:
                release_here()
                shared.give_back(backend, socket_id)

            # a person's stream keeps the table from being closed as idle (bots hold no token),
            # and says the player is connected to it (their seat is not sent away: presence.py)
            watcher = presence.watch(backend, table_id, state.status, player) if player is not None else None
            if player is not None:  # a player whose seat went away is back (docs/bots.md, "Away seats")
                await _back(backend, table_id, player, state)
            try:
                await _follow(socket, table_id, reader, player, seen if behind else after, behind,
                              settings.ws_send_timeout_s, release, chat_cursor, lang)
            finally:
                presence.unwatch(watcher)
                release()
    except ApiError as refused:
        if refused.code == "too_many_sockets":
            log.info("socket_refused", code=refused.code, address=quotas.client_address(socket), player=player)
        await socket.send_text(msgspec.json.encode(
            {"type": "error", **problem(refused.code, refused.message, lang)}).decode())
        await socket.close(code=sockets.POLICY_VIOLATION, reason=refused.code)
    except (StoreError, redis.RedisError):  # the store is down or stalled: come back later
        await socket.close(code=TRY_AGAIN_LATER, reason="unavailable")


async def _back(backend: Backend, table_id: str, player: str, state: TableState) -> None:
    """Opening one's stream brings an away seat back; a refusal (the table closed
    meanwhile) is no reason to close the stream."""
    try:
        await seats.back(backend, table_id, player, state)
    except MightyError as refused:
        log.debug("back_refused", table=table_id, code=refused.code)


async def _follow(socket: WebSocket[Any, Any, Any], table_id: str, reader: str, player: str | None,
                  after: int, behind: bool, send_timeout_s: float, release: Callable[[], None],
                  chat_after: str | None = None, lang: str = DEFAULT) -> None:
    """The stream proper: a pusher task sends each newer view while this one answers the
    client's frames (``behind``: the reader's cursor is past the table, so its current
    view goes first, marked ``rollback``). Each send waits at most ``send_timeout_s`` for
    a client that does not read; past it the socket is closed with 1013 (the client
    reconnects with ``after=``). Once the connection is over its quota slot is
    ``release``d, then the pusher stopped."""
    lock = asyncio.Lock()  # one writer at a time: the pusher and the command answers

    async def send(data: bytes) -> None:
        async with lock:
            await sockets.send_within(socket, data.decode(), send_timeout_s)

    async def push() -> None:
        backend = _backend(socket)
        # a table's turn_seconds is set when it is created: without it no push has a
        # deadline to read (one lookup for the stream, not a GET per push)
        entry = await backend.entry(table_id)
        timed = entry is None or entry.turn_seconds > 0
        last = after
        async for stored in backend.follow(table_id, reader, 0 if behind else after):
            document = await _document(backend, table_id, stored, timed, lang)
            # not newer than what the reader had: the store went back (follow gives that
            # only when a view read again is older than the last one given)
            rollback = document["version"] <= last
            last = document["version"]
            await send(view_frame(document, rollback=rollback))

    async def push_chat() -> None:  # the table's chat, less what the reader muted (chat.py)
        async for said in _backend(socket).chat.follow(table_id, player, chat_after):
            await send(chat.encode_frame(said))

    async def push_or_close() -> None:
        """A pusher that cannot go on closes the socket, so that the client, which resumes
        from its last version, reconnects (to this gateway or another) instead of waiting
        on a socket that says nothing: 1013 when the store is down or the client too slow,
        1011 otherwise. A client that has gone is no failure: nothing is logged."""
        try:
            await chat.both(push(), push_chat())
        except sockets.TooSlow as slow:
            log.info("socket_too_slow", table=table_id, reason=str(slow))
            await _close_quietly(socket, TRY_AGAIN_LATER, "too_slow")
        except (StoreError, redis.RedisError) as error:
            log.warning("stream_closed", table=table_id, reason="unavailable", error=str(error)[:200])
            await _close_quietly(socket, TRY_AGAIN_LATER, "unavailable")
        except Exception as error:
            if sockets.is_disconnect(error):
                return
            log.exception("stream_failed", table=table_id)
            await _close_quietly(socket, 1011, "internal_error")

    pusher = asyncio.create_task(push_or_close())
    try:
        while True:
            message = await socket.receive()
            if message["type"] == "websocket.disconnect":
                return
            raw: Any = message.get("text") or message.get("bytes") or b""
            data: bytes = raw.encode() if isinstance(raw, str) else bytes(raw)
            if len(data) > MAX_FRAME:
                await socket.close(code=sockets.TOO_BIG, reason="frame over 16 KiB")
                return
            await send(await _answer(socket, table_id, player, data, lang))
            if pusher.done():
                pusher.result()  # raise what stopped the pusher
    except sockets.TooSlow as slow:
        log.info("socket_too_slow", table=table_id, reason=str(slow))
        await _close_quietly(socket, TRY_AGAIN_LATER, "too_slow")
    except WebSocketDisconnect:
        return
    finally:
        release()
        await sockets.stop(pusher)


async def _close_quietly(socket: WebSocket[Any, Any, Any], code: int, reason: str) -> None:
    """Close the socket if it is still there, waiting a second at most (a client that
    does not read may never take the close frame: uvicorn's protocol then aborts it)."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(1.0):
            await socket.close(code=code, reason=reason)


async def _answer(socket: WebSocket[Any, Any, Any], table_id: str, player: str | None, data: bytes,
                  lang: str = DEFAULT) -> bytes:
    if too_deep(data):  # before the decoder recurses through it
        deep = deep_refusal()
        return msgspec.json.encode({"type": "refused", "id": None, **problem(deep.code, deep.message, lang)})
    try:
        frame = _decode_frame(data)
    except msgspec.DecodeError:
        return msgspec.json.encode({"type": "refused", "id": None,
                                    **problem("invalid_request", "A frame is a JSON object.", lang)})
    kind = frame.get("type")
    if kind == "ping":
        return b'{"type":"pong"}'
    if kind != "command":
        return msgspec.json.encode({"type": "refused", "id": None,
                                    **problem("invalid_request", "A frame's type is command or ping.", lang)})
    client_id = frame.get("id") if isinstance(frame.get("id"), str) else None
    try:
        if player is None:
            raise ApiError("unauthorized", "Commands need a player's token (?token=).")
        body = msgspec.convert({"id": frame.get("id"), "command": frame.get("command")}, CommandRequest)
        version = await _command(socket, table_id, player, body)
    except msgspec.ValidationError as bad:
        return msgspec.json.encode({"type": "refused", "id": client_id, **problem("invalid_request", str(bad), lang)})
    except Exception as error:
        try:
            refused = as_api_error(error)
        except TypeError:
            log.exception("stream_command_failed", table=table_id)
            refused = ApiError("internal", "The server failed; it has been logged.", status=500)
        return msgspec.json.encode({"type": "refused", "id": client_id, **problem(refused.code, refused.message, lang)})
    return msgspec.json.encode({"type": "ack", "id": client_id, "version": version})


# ---------------------------------------------------------------- audit and replay


def _audit_reads(request: Request[Any, Any, Any]) -> AuditReads:
    """The app's audit reads (checkpointed: services/gateway/audit_reads.py)."""
    state = request.app.state
    reads: AuditReads | None = getattr(state, "audit_reads", None)
    if reads is None or reads.backend is not _backend(request):
        reads = state.audit_reads = AuditReads(_backend(request))
    return reads


@get("/tables/{table:str}/hands", summary="The table's hands")
async def list_hands(request: Request[Any, Any, Any], table: FromPath[str]) -> Hands:
    return Hands(hands=await _audit_reads(request).hands(_table_id(table)))


@get("/tables/{table:str}/hands/{n:int}", summary="A hand file, once the hand has ended")
async def get_hand(request: Request[Any, Any, Any], table: FromPath[str], n: FromPath[int]) -> dict[str, Any]:
    return await _audit_reads(request).hand_file(_table_id(table), n)


@get("/tables/{table:str}/hands/{n:int}/replay", summary="A hand step by step as a reader saw it")
async def replay_hand(request: Request[Any, Any, Any], table: FromPath[str], n: FromPath[int],
                      as_: Annotated[str, QueryParameter(name="as", description="a seat, spectator or audit")] = "spectator") -> Replay:
    steps, deal = await _audit_reads(request).replay(_table_id(table), n, as_, await _reader_lang(request))
    return Replay(steps=steps, deal=deal)


@get("/tables/{table:str}/verify", summary="Check the table's hash chain, deals and replay")
async def verify_table(request: Request[Any, Any, Any], table: FromPath[str]) -> Verified:
    return await _audit_reads(request).verify(_table_id(table))


@get("/tables/{table:str}/ledger", summary="The table's scores, hand by hand")
async def get_ledger(request: Request[Any, Any, Any], table: FromPath[str]) -> Ledger:
    table_id = _table_id(table)
    ledger = await _backend(request).ledger(table_id)
    if ledger is None:
        if (await _backend(request).state(table_id))[0].status == "new":
            raise ApiError("unknown_table", f"There is no table {table_id}.")
        return Ledger(hands=[], totals=[])
    lines = [LedgerLine(hand=table_audit.api_hand(line.hand_no), scores=list(line.scores)) for line in ledger.hands]
    return Ledger(hands=lines, totals=list(ledger.totals))


# ---------------------------------------------------------------- operations


@get("/healthz", summary="The process runs")
async def healthz() -> Health:
    return Health(ok=True)


@get("/readyz", summary="Redis answers and the projections keep up")
async def readyz(request: Request[Any, Any, Any]) -> Response[Health]:
    problems: list[str] = []
    try:
        backend = _backend(request)
        async with asyncio.timeout(STORE_DEADLINE_S):
            await backend.ping()
            lag = await backend.lag_seconds()
        for kind, seconds in lag.items():
            if seconds > _settings(request).max_lag_s:
                problems.append(f"the {kind} projection is {seconds:.1f} s behind")
    except TimeoutError:
        problems.append(f"the store did not answer within {STORE_DEADLINE_S:g} s")
    except Exception as error:  # readiness reports, it never fails itself
        problems.append(f"the store cannot be reached: {error}")
    return Response(Health(ok=not problems, problems=problems), status_code=200 if not problems else 503)


@get("/metrics", summary="Prometheus metrics", media_type=CONTENT_TYPE_LATEST)
async def metrics_route(request: Request[Any, Any, Any]) -> Response[bytes]:
    metrics: Metrics = request.app.state.metrics
    backend = _backend(request)
    core = getattr(getattr(backend, "handler", None), "core", None)
    if core is not None:
        metrics.count_rollbacks(core.rollbacks)
        metrics.cached_tables.labels("closed").set(core.cache.closed)
        metrics.cached_tables.labels("in_play").set(len(core.cache) - core.cache.closed)
    collector: Collector = request.app.state.collector
    metrics.gc_runs.set(collector.runs)
    metrics.gc_found.set(collector.found)
    metrics.gc_seconds.set(collector.seconds)
    with contextlib.suppress(Exception):  # a scrape while Redis is down (or stalls) still answers
        async with asyncio.timeout(STORE_DEADLINE_S):
            lag = await backend.lag_seconds()
            dead = await backend.dead_letters()
        for kind, seconds in lag.items():
            metrics.lag.labels(kind).set(seconds)
        for kind, count in dead.items():
            metrics.dead.labels(kind).set(count)
    return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)


# ---------------------------------------------------------------- the app


class SchemaPage(OpenAPIRenderPlugin):
    """``/schema``: the routes of the OpenAPI document as a page, with no script to fetch."""

    def __init__(self) -> None:
        super().__init__(path="/")

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        from html import escape

        rows = []
        for path, operations in openapi_schema.get("paths", {}).items():
            for method, op in operations.items():
                if isinstance(op, dict):
                    rows.append(f"<tr><td>{escape(method.upper())}</td><td><code>{escape(path)}</code></td>"
                                f"<td>{escape(op.get('summary', ''))}</td></tr>")
        title = escape(openapi_schema.get("info", {}).get("title", "API"))
        return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
                f"<h1>{title}</h1><p>The whole document: <a href='{self.get_openapi_json_route(request)}'>"
                f"openapi.json</a></p><table>{''.join(rows)}</table></body></html>").encode()


def _too_slow() -> ApiError:
    return ApiError("unavailable", f"The event store did not answer within {STORE_DEADLINE_S:g} s. "
                    "Retry with the same command id.")


def _extend_deadline(request: Request[Any, Any, Any], seconds: float | None) -> None:
    """Give a request that waits on purpose (quickplay) ``seconds`` more than the deadline;
    None: no deadline any more (the store has answered; computing the answer is left)."""
    deadline: asyncio.Timeout | None = request.scope.get(_DEADLINE_KEY)  # type: ignore[assignment]
    if deadline is not None:
        if deadline.expired():  # too late: it is expiring (cancelling the request) or has
            raise _too_slow()  # an expiring Timeout cannot be rescheduled (RuntimeError)
        deadline.reschedule(None if seconds is None
                            else asyncio.get_running_loop().time() + seconds + STORE_DEADLINE_S + 1.0)


def _deadline(app: ASGIApp) -> ASGIApp:
    """Every HTTP request is answered within ``STORE_DEADLINE_S`` and a second: past it,
    503 ``unavailable`` (what it was waiting for is cancelled). A route that waits on
    purpose extends its own deadline (``_extend_deadline``). A WebSocket is not bounded
    here: its commands are, one by one (``_command``)."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        kind: str = scope["type"]
        if kind != "http":
            await app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            async with asyncio.timeout(STORE_DEADLINE_S + 1.0) as deadline:
                scope[_DEADLINE_KEY] = deadline  # type: ignore[literal-required]
                await app(scope, receive, sending)
        except TimeoutError:
            if started:  # too late to answer otherwise: the client sees the answer cut short
                raise
            log.warning("request_too_slow", path=scope.get("path"), deadline_s=STORE_DEADLINE_S + 1.0)
            error = _too_slow()
            answer = ASGIResponse(body=msgspec.json.encode(problem(error.code, error.message, language.of_scope(scope))),
                                  status_code=error.status, media_type="application/json")
            await answer(scope, receive, send)

    return middleware


def _log_requests(app: ASGIApp) -> ASGIApp:
    """One structlog line per HTTP request: method, path, status, latency, player; at
    debug (routine), info for a 429 (a client held back), warning for a 5xx."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        kind: str = scope["type"]  # ScopeType is a str enum: "http" compares equal
        if kind != "http":
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        seen: dict[str, Any] = {"status": 500}
        scope["mighty_log"] = {}  # type: ignore[typeddict-unknown-key]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
            await send(message)

        try:
            await app(scope, receive, sending)
        finally:
            status = seen["status"]
            owner: Any = scope.get("app")
            state = owner.state if owner is not None else None
            metrics = getattr(state, "metrics", None) if state is not None else None
            if metrics is not None:
                metrics.requests.labels(str(status)).inc()
            # the path, never the query string (a token may be there) nor a header
            write = log.warning if status >= 500 else log.info if status == 429 else log.debug
            write("request", method=scope.get("method"), path=scope.get("path"), status=status,
                  latency_ms=round((time.perf_counter() - started) * 1000, 3),
                  **scope.get("mighty_log", {}))  # type: ignore[arg-type]

    return middleware


def create_app(settings: Settings, backend: Backend | None = None) -> Litestar:
    """The gateway on ``backend``; without one, on the store ``settings`` names (built
    by ``services.bootstrap.bootstrap_gateway`` when the app starts)."""

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        if app.state.backend is None:
            from services.bootstrap import bootstrap_gateway

            app.state.backend = bootstrap_gateway(settings)
        keepers = [asyncio.create_task(quotas.keep_seated_players(app.state.backend, settings)),
                   asyncio.create_task(app.state.shared_sockets.keep(app.state.backend)),
                   asyncio.create_task(app.state.collector.run())]
        if settings.debug_tracemalloc_s > 0:
            keepers.append(asyncio.create_task(MemoryTrace().run(settings.debug_tracemalloc_s)))
        try:
            yield
        finally:
            for keeper in keepers:
                keeper.cancel()
            for keeper in keepers:
                with contextlib.suppress(asyncio.CancelledError):
                    await keeper
            await app.state.backend.close()

    api = Router(path="/api/v1", route_handlers=[
        create_player, get_me, patch_me, get_player, get_leaderboard, list_games, list_languages, get_translations, list_tables,
        create_table, get_table, join_table, leave_table,
        close_table, quickplay, rematch, get_view, post_command, stream, list_hands, get_hand, replay_hand,
        verify_table, get_ledger, *accounts.ROUTES, post_chat, get_chat, mute_player, unmute_player, list_mutes,
    ])
    openapi = OpenAPIConfig(
        title="Mighty", version="1", path="/schema",
        description="The HTTP and WebSocket API of the Mighty and Mitigati table service.",
        render_plugins=[JsonRenderPlugin(), SchemaPage()],
        components=Components(security_schemes={"bearer": SecurityScheme(type="http", scheme="bearer")}),
    )
    return Litestar(
        route_handlers=[api, healthz, readyz, metrics_route, *static_routers(settings)],
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        request_max_body_size=MAX_BODY,
        cors_config=CORSConfig(allow_origins=list(settings.cors_origins)) if settings.cors_origins else None,
        openapi_config=openapi,
        middleware=[_log_requests, _deadline, json_bodies],
        state=State({"backend": backend, "settings": settings, "metrics": Metrics(),
                     "collector": Collector(settings.gc_every_s),
                     "socket_counts": SocketCounts(settings.sockets_per_address, settings.sockets_per_player),
                     "shared_sockets": SharedSockets(settings.sockets_per_address, settings.sockets_per_player)}),
        logging_config=None,  # the process's logging is structlog's (services/logs.py), tokens kept out
        lifespan=[lifespan],
    )

"""The gateway's routes (``../shared/API.md`` as docs/gateway.md tells it), built as a
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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import msgspec
import redis
import structlog
from litestar import Litestar, Request, Response, Router, get, post
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
from services.bots.timers import deadline_of
from services.gateway import audit as table_audit
from services.gateway import lobby, tokens
from services.gateway.backend import Backend
from services.gateway.errors import EXCEPTION_HANDLERS, ApiError, as_api_error, problem
from services.gateway.static import static_routers
from services.gateway.views import api_view, decode_stored, document_of, needs_public, view_frame
from services.gateway.wire import (
    Accepted,
    CommandRequest,
    Contracts,
    Hands,
    Health,
    Joined,
    JoinRequest,
    Ledger,
    LedgerLine,
    NewPlayer,
    NewTable,
    PlayerCreated,
    PlayerStats,
    Quickplay,
    Replay,
    Seated,
    Table,
    Tables,
    Verified,
    View,
)
from services.settings import Settings
from services.store.errors import StoreError
from services.store.keys import check_table_id

log = structlog.get_logger("mighty.gateway")

# WebSocket close code 1013 (RFC 6455 registry: "Try Again Later"): the store is down or
# stalled; the client reconnects and resumes from its last version
TRY_AGAIN_LATER = 1013
MAX_FRAME = 16 * 1024  # a WebSocket frame (API.md, Playing)
MAX_BODY = 16 * 1024  # a request body: larger is 413 too_large (API.md, Conventions)
# How long a command may wait for the store before it is answered 503 ``unavailable``; a
# request, one second longer (a command's own deadline goes first, counted as refused).
# Without it a Redis that stalls (stopped, swapping) held each call for the client's
# retries of its 5 s socket timeout: 35 s and more before any answer (docs/reliability.md).
STORE_DEADLINE_S = 3.0
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
    if not token:
        raise ApiError("unauthorized", "This call needs a player's token: Authorization: Bearer <token>.")
    try:
        player = tokens.check(await _backend(connection).secret(), token, time.time())
    except tokens.BadToken as bad:
        raise ApiError("unauthorized", str(bad)) from None
    _note(connection, player=player)
    return player


def _bearer(connection: ASGIConnection[Any, Any, Any, Any]) -> str | None:
    header = connection.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if not header:
        return None
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError("unauthorized", "The Authorization header is not 'Bearer <token>'.")
    return token.strip()


async def player_required(request: Request[Any, Any, Any]) -> str:
    return await _player_of_token(request, _bearer(request))


async def player_optional(request: Request[Any, Any, Any]) -> str | None:
    token = _bearer(request)
    return None if token is None else await _player_of_token(request, token)


def _table_id(table: str) -> str:
    try:
        return check_table_id(table)
    except MightyError:
        raise ApiError("unknown_table", f"There is no table {table[:64]!r}.") from None


# ---------------------------------------------------------------- players


@post("/players", status_code=201, summary="Create a guest player")
async def create_player(request: Request[Any, Any, Any], data: JSONBody[NewPlayer]) -> PlayerCreated:
    if not data.name.isprintable() or not data.name.strip():
        raise ApiError("invalid_request", "A name is 1 to 24 printable characters, not only spaces.")
    backend = _backend(request)
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
    return PlayerStats(player=player, name=found.name, hands=hands, total=total,
                       contracts=Contracts(made=made, failed=declared - made), bot=found.bot)


# ---------------------------------------------------------------- lobby


@get("/tables", summary="The lobby: tables from the directory")
async def list_tables(
    request: Request[Any, Any, Any],
    status: Annotated[str | None, QueryParameter(description="open, playing or finished")] = None,
    game: Annotated[str | None, QueryParameter(description="a rule set name, e.g. mighty-5")] = None,
) -> Tables:
    if status is not None and status not in ("open", "playing", "finished"):
        raise ApiError("invalid_request", f"status is open, playing or finished, not {status[:40]!r}.")
    backend = _backend(request)
    entries = [e for e in await backend.entries()
               if (status is None or lobby.status_of(e) == status)
               and (game is None or lobby.game_of_entry(e) == game)]
    return Tables(tables=await lobby.tables_of(backend, entries))


@post("/tables", status_code=201, summary="Create a table")
async def create_table(request: Request[Any, Any, Any], data: JSONBody[NewTable]) -> Table:
    caller = await player_required(request)
    return await lobby.create_table(_backend(request), caller, data)


@get("/tables/{table:str}", summary="One table")
async def get_table(request: Request[Any, Any, Any], table: FromPath[str]) -> Table:
    backend = _backend(request)
    entry = await backend.entry(_table_id(table))
    if entry is None:
        raise ApiError("unknown_table", f"There is no table {table}.")
    return await lobby.table_of(backend, entry)


@post("/tables/{table:str}/join", status_code=200, summary="Take a seat")
async def join_table(request: Request[Any, Any, Any], table: FromPath[str], data: JSONBody[JoinRequest | None] = None) -> Joined:
    caller = await player_required(request)
    seat = await lobby.join(_backend(request), _table_id(table), caller, data.seat if data else None)
    return Joined(seat=seat)


@post("/tables/{table:str}/leave", status_code=204, summary="Leave a seat")
async def leave_table(request: Request[Any, Any, Any], table: FromPath[str]) -> None:
    caller = await player_required(request)
    await lobby.leave(_backend(request), _table_id(table), caller)


@post("/quickplay", status_code=200, summary="Be seated with others waiting for the same game")
async def quickplay(request: Request[Any, Any, Any], data: JSONBody[Quickplay]) -> Seated:
    caller = await player_required(request)
    _extend_deadline(request, data.wait_seconds)  # the wait is the caller's, not the store's
    table_id, seat = await lobby.quickplay(_backend(request), caller, data.game, data.wait_seconds)
    return Seated(table=table_id, seat=seat)


@post("/tables/{table:str}/rematch", status_code=200, summary="The same game again")
async def rematch(request: Request[Any, Any, Any], table: FromPath[str]) -> Table:
    caller = await player_required(request)
    return await lobby.rematch(_backend(request), _table_id(table), caller)


# ---------------------------------------------------------------- playing


async def _reader(backend: Backend, table_id: str, player: str | None) -> tuple[TableState, int, str]:
    state, version = await backend.state(table_id)
    if state.status == "new":
        raise ApiError("unknown_table", f"There is no table {table_id}.")
    if player is not None and player in state.seats:
        return state, version, str(state.seats.index(player))
    return state, version, "spectator"


async def _document(backend: Backend, table_id: str, stored: bytes, timed: bool = True) -> dict[str, Any]:
    """The API's view document of a stored view; a closed table's compacted seat view
    gets its last hand from the spectator's (views.py). ``timed``: the table may have a
    turn deadline (created with ``turn_seconds``; only then is there one to read)."""
    doc = decode_stored(stored)
    public = await backend.view(table_id, "spectator") if needs_public(doc) else None
    document = document_of(doc, public)
    if timed and document["to_act"] is not None:  # the timer worker's deadline
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
    document: Any = await _document(backend, table_id, stored)
    return Response(document)


async def _command(connection: ASGIConnection[Any, Any, Any, Any], table_id: str, player: str,
                   body: CommandRequest) -> int:
    """One player's command: the rate limit, the command path, the metrics, one log line."""
    settings = _settings(connection)
    metrics: Metrics = connection.app.state.metrics
    backend = _backend(connection)
    started = time.perf_counter()
    outcome = "ok"
    kind = str(body.command.get("type"))[:32]
    noted: dict[str, Any] = {"seat": None}
    try:
        try:
            async with asyncio.timeout(STORE_DEADLINE_S):
                wait = await backend.take_command(player, settings.rate_commands, settings.rate_window_s)
                if wait is not None:
                    raise ApiError("rate_limited", f"More than {settings.rate_commands} commands in "
                                   f"{settings.rate_window_s} s; retry in {wait:.1f} s.",
                                   headers={"Retry-After": str(max(1, round(wait + 0.5)))})
                return await lobby.play(backend, table_id, player, body.id, body.command, noted)
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
        log.info("player_command", table=table_id, seat=noted["seat"], player=player, command=kind, id=body.id,
                 outcome=outcome, latency_ms=round(elapsed * 1000, 3))


@post("/tables/{table:str}/commands", status_code=200, summary="Send a command as the caller's seat")
async def post_command(request: Request[Any, Any, Any], table: FromPath[str], data: JSONBody[CommandRequest]) -> Accepted:
    caller = await player_required(request)
    return Accepted(version=await _command(request, _table_id(table), caller, data))


_decode_frame = msgspec.json.Decoder(dict[str, Any]).decode


@websocket("/tables/{table:str}/stream")
async def stream(socket: WebSocket[Any, Any, Any], table: FromPath[str], after: FromQuery[int] = 0,
                 token: FromQuery[str | None] = None) -> None:
    """Push each change of the reader's view; take commands and pings (API.md, Playing)."""
    metrics: Metrics = socket.app.state.metrics
    await socket.accept()
    try:
        player = None if token is None else await _player_of_token(socket, token)
        table_id = _table_id(table)
        state, _, reader = await _reader(_backend(socket), table_id, player)
    except ApiError as refused:
        await socket.send_text(msgspec.json.encode({"type": "error", **problem(refused.code, refused.message)}).decode())
        await socket.close(code=1008, reason=refused.code)
        return
    except (StoreError, redis.RedisError):  # the store is down or stalled: come back later
        await socket.close(code=TRY_AGAIN_LATER, reason="unavailable")
        return
    metrics.sockets.inc()
    lock = asyncio.Lock()  # one writer at a time: the pusher and the command answers

    async def send(data: bytes) -> None:
        async with lock:
            await socket.send_text(data.decode())

    async def push() -> None:
        backend = _backend(socket)
        # a table's turn_seconds is set when it is created: without it no push has a
        # deadline to read (one lookup for the stream, not a GET per push)
        entry = await backend.entry(table_id)
        timed = entry is None or entry.turn_seconds > 0
        async for stored in backend.follow(table_id, reader, after):
            await send(view_frame(await _document(backend, table_id, stored, timed)))

    async def push_or_close() -> None:
        """A pusher that cannot go on closes the socket, so that the client, which resumes
        from its last version, reconnects (to this gateway or another) instead of waiting
        on a socket that says nothing: 1013 when the store is down, 1011 otherwise."""
        try:
            await push()
        except (StoreError, redis.RedisError) as error:
            log.warning("stream_closed", table=table_id, reason="unavailable", error=str(error)[:200])
            with contextlib.suppress(Exception):
                await socket.close(code=TRY_AGAIN_LATER, reason="unavailable")
        except Exception:
            log.exception("stream_failed", table=table_id)
            with contextlib.suppress(Exception):
                await socket.close(code=1011, reason="internal_error")

    pusher = asyncio.create_task(push_or_close())
    try:
        while True:
            message = await socket.receive()
            if message["type"] == "websocket.disconnect":
                return
            raw: Any = message.get("text") or message.get("bytes") or b""
            data: bytes = raw.encode() if isinstance(raw, str) else bytes(raw)
            if len(data) > MAX_FRAME:
                await socket.close(code=1009, reason="frame over 16 KiB")
                return
            await send(await _answer(socket, table_id, player, data))
            if pusher.done():
                pusher.result()  # raise what stopped the pusher
    except WebSocketDisconnect:
        return
    finally:
        pusher.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await pusher
        metrics.sockets.dec()


async def _answer(socket: WebSocket[Any, Any, Any], table_id: str, player: str | None, data: bytes) -> bytes:
    try:
        frame = _decode_frame(data)
    except msgspec.DecodeError:
        return msgspec.json.encode({"type": "refused", "id": None, **problem("invalid_request", "A frame is a JSON object.")})
    kind = frame.get("type")
    if kind == "ping":
        return b'{"type":"pong"}'
    if kind != "command":
        return msgspec.json.encode({"type": "refused", "id": None,
                                    **problem("invalid_request", "A frame's type is command or ping.")})
    client_id = frame.get("id") if isinstance(frame.get("id"), str) else None
    try:
        if player is None:
            raise ApiError("unauthorized", "Commands need a player's token (?token=).")
        body = msgspec.convert({"id": frame.get("id"), "command": frame.get("command")}, CommandRequest)
        version = await _command(socket, table_id, player, body)
    except msgspec.ValidationError as bad:
        return msgspec.json.encode({"type": "refused", "id": client_id, **problem("invalid_request", str(bad))})
    except Exception as error:
        try:
            refused = as_api_error(error)
        except TypeError:
            log.exception("stream_command_failed", table=table_id)
            refused = ApiError("internal", "The server failed; it has been logged.", status=500)
        return msgspec.json.encode({"type": "refused", "id": client_id, **problem(refused.code, refused.message)})
    return msgspec.json.encode({"type": "ack", "id": client_id, "version": version})


# ---------------------------------------------------------------- audit and replay


@get("/tables/{table:str}/hands", summary="The table's hands")
async def list_hands(request: Request[Any, Any, Any], table: FromPath[str]) -> Hands:
    stored = await _stored(request, table)
    return Hands(hands=table_audit.hands_of(stored))


async def _stored(request: Request[Any, Any, Any], table: str) -> list[Any]:
    table_id = _table_id(table)
    stored = await _backend(request).events(table_id)
    if not stored:
        raise ApiError("unknown_table", f"There is no table {table_id}.")
    _extend_deadline(request, None)  # what follows is the rules' work, not a wait for the store
    return stored


@get("/tables/{table:str}/hands/{n:int}", summary="A hand file, once the hand has ended")
async def get_hand(request: Request[Any, Any, Any], table: FromPath[str], n: FromPath[int]) -> dict[str, Any]:
    stored = await _stored(request, table)
    return await asyncio.to_thread(table_audit.hand_file, table, stored, n)


@get("/tables/{table:str}/hands/{n:int}/replay", summary="A hand step by step as a reader saw it")
async def replay_hand(request: Request[Any, Any, Any], table: FromPath[str], n: FromPath[int],
                      as_: Annotated[str, QueryParameter(name="as", description="a seat, spectator or audit")] = "spectator") -> Replay:
    stored = await _stored(request, table)
    document = await asyncio.to_thread(table_audit.hand_file, table, stored, n)
    steps = await asyncio.to_thread(table_audit.replay_steps, document, as_)
    return Replay(steps=steps, deal=table_audit.revealed_deal(stored, n))


@get("/tables/{table:str}/verify", summary="Check the table's hash chain, deals and replay")
async def verify_table(request: Request[Any, Any, Any], table: FromPath[str]) -> Verified:
    stored = await _stored(request, table)
    return await asyncio.to_thread(table_audit.verify, table, stored)


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
            answer = ASGIResponse(body=msgspec.json.encode(problem(error.code, error.message)),
                                  status_code=error.status, media_type="application/json")
            await answer(scope, receive, send)

    return middleware


def _log_requests(app: ASGIApp) -> ASGIApp:
    """One structlog line per HTTP request: method, path, status, latency, player."""

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
            log.info("request", method=scope.get("method"), path=scope.get("path"), status=status,
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
        try:
            yield
        finally:
            await app.state.backend.close()

    api = Router(path="/api/v1", route_handlers=[
        create_player, get_player, list_tables, create_table, get_table, join_table, leave_table,
        quickplay, rematch, get_view, post_command, stream, list_hands, get_hand, replay_hand,
        verify_table, get_ledger,
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
        middleware=[_log_requests, _deadline],
        state=State({"backend": backend, "settings": settings, "metrics": Metrics()}),
        lifespan=[lifespan],
    )

"""Playing (docs/api.md, "Playing"): the caller's view, a command over HTTP, the WebSocket stream."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any, Final

import msgspec
import redis
import structlog
from litestar import Controller, Request, Response, get, post
from litestar.connection import ASGIConnection, WebSocket
from litestar.exceptions import WebSocketDisconnect
from litestar.handlers import websocket
from litestar.params import FromPath, FromQuery, JSONBody
from msgspec.structs import replace

from domain.errors import MightyError
from domain.table import TableState
from projections.docs import encode
from projections.views import SPECTATOR, ViewState, render
from services.app import commands as playing
from services.app import seats
from services.bots.timers import deadline_of
from services.gateway import chat as chat
from services.gateway import (
    deadline,
    language,
    presence,
    quotas,
    sockets,
)
from services.gateway.admission import Admission, Busy
from services.gateway.bodies import deep_refusal, too_deep
from services.gateway.deps import (
    BackendDep,
    Caller,
    Viewer,
    backend_in,
    needs_player,
    player_of_token,
    settings_in,
    table_id_of,
)
from services.gateway.errors import ApiError, as_api_error, problem
from services.gateway.hints import Hint, suggest
from services.gateway.metrics import Metrics
from services.gateway.views import api_view, decode_stored, document_of, needs_public, view_frame
from services.gateway.wire import (
    Accepted,
    CommandRequest,
    View,
)
from services.i18n.catalogs import DEFAULT
from services.store.errors import StoreError

log = structlog.get_logger("mighty.gateway")

# WebSocket close code 1013 (RFC 6455 registry: "Try Again Later"): the store is down or
# stalled; the client reconnects and resumes from its last version
TRY_AGAIN_LATER = 1013
MAX_FRAME = 16 * 1024  # a WebSocket frame (docs/api.md, "Playing")
# Outcomes of a command worth a line at info: a client held back by a limit. The rest
# (played, refused by the rules) is routine: a line at debug.
_NOTABLE_OUTCOMES = frozenset({"refused:rate_limited"})
_decode_frame = msgspec.json.Decoder(dict[str, Any]).decode


async def reader_of(backend: BackendDep, table_id: str, player: str | None) -> tuple[TableState, int, str]:
    state, version = await backend.state(table_id)
    if state.status == "new":
        raise ApiError("unknown_table", f"There is no table {table_id}.")
    if player is not None and player in state.seats:
        return state, version, str(state.seats.index(player))
    return state, version, "spectator"


def rendered(state: TableState, version: int, reader: str) -> bytes:
    """The reader's view as the views worker stores it (MessagePack: projections/docs.py),
    rendered here: for a table the worker has not folded this far yet (behind by a moment,
    or folding its views again after a Redis restart: they are kept off the AOF,
    docs/workers.md), and for a seat of a closed table, whose view the worker does not
    keep (projections/views.py): the table's public face, the spectator's view, as that
    seat's (what the seat's follower was last pushed, and what an archived table shows)."""
    folded = ViewState(table=state, version=version, name="")
    if state.status == "closed" and reader != SPECTATOR:
        return encode(replace(render(folded, SPECTATOR), reader=reader))
    return encode(render(folded, reader))


async def _document(backend: BackendDep, table_id: str, stored: bytes, timed: bool = True,
                    lang: str = DEFAULT) -> dict[str, Any]:
    """The API's view document of a stored view, labelled in ``lang``; a closed table's
    compacted seat view gets its last hand from the spectator's (views.py). ``timed``: the
    table may have a turn deadline (created with ``turn_seconds``; only then is there one
    to read)."""
    doc = decode_stored(stored)
    public = await backend.view(table_id, "spectator") if needs_public(doc) else None
    document = document_of(doc, public, lang)
    if _lacks_deadline(document, timed):
        # a view stored before views held their deadline: the timer worker's document
        document["deadline"] = deadline_of(await backend.deadline(table_id), document["version"], document["to_act"])
    return document


def _document_at_once(stored: bytes, timed: bool, lang: str) -> dict[str, Any] | None:
    """``_document`` when it needs nothing read (None: it does: a compacted seat view's
    public face, a deadline from the timer worker's document)."""
    doc = decode_stored(stored)
    if needs_public(doc):
        return None
    document = document_of(doc, None, lang)
    return None if _lacks_deadline(document, timed) else document


def _lacks_deadline(document: dict[str, Any], timed: bool) -> bool:
    return timed and document["to_act"] is not None and document["deadline"] is None


async def _command(connection: ASGIConnection[Any, Any, Any, Any], table_id: str, player: str,
                   body: CommandRequest) -> int:
    """One player's command: the rate limit, the command path, the metrics, one log line."""
    settings = settings_in(connection)
    metrics: Metrics = connection.app.state.metrics
    backend = backend_in(connection)
    started = time.perf_counter()
    outcome = "ok"
    # a legal entry sent back as the view gave it: its ``label`` is the reader's text,
    # not part of the command (docs/api.md, "Games, labels and languages")
    command = {k: v for k, v in body.command.items() if k != "label"}
    kind = str(command.get("type"))[:32]
    noted: dict[str, Any] = {"seat": None}
    try:
        try:
            async with asyncio.timeout(deadline.STORE_DEADLINE_S):
                # counted once per command id: a retry is not counted again (quotas.py)
                await quotas.admit_command(backend, settings, player, table_id, body.id, command)
                version = await playing.play(backend, table_id, player, body.id, body.command, noted)
                cached = backend.cached(table_id)
                if cached is not None:  # a match played on keeps its players' records
                    await backend.touch_players([p for p in cached[0].seats if p is not None])
                return version
        except TimeoutError:
            raise deadline.too_slow() from None
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


class PlayController(Controller):
    """A table's view, its commands and its stream."""

    path = "/tables/{table:str}"

    @get("/view", summary="The caller's view of the table")
    async def get_view(self, backend: BackendDep, viewer: Viewer, request: Request[Any, Any, Any], table: FromPath[str]) -> Response[View]:
        caller = viewer
        table_id = table_id_of(table)
        state, version, reader = await reader_of(backend, table_id, caller)
        stored = await backend.view(table_id, reader)
        if stored is None or api_view(stored).version < version:
            stored = rendered(state, version, reader)
        # the View fields over the game's own view of the hand: more than the schema names
        document: Any = await _document(backend, table_id, stored, lang=language.of(request))
        return Response(document)

    @get("/hint", summary="What a bot would play at the caller's turn (a table that allows hints)",
         guards=[needs_player])
    async def get_hint(self, backend: BackendDep, caller: Caller, request: Request[Any, Any, Any],
                       table: FromPath[str]) -> Hint:
        state, version, reader = await reader_of(backend, table_id_of(table), caller)
        return suggest(state, version, int(reader) if reader.isdigit() else None, language.of(request))

    @post("/commands", status_code=200, summary="Send a command as the caller's seat", guards=[needs_player])
    async def post_command(self, caller: Caller, request: Request[Any, Any, Any], table: FromPath[str], data: JSONBody[CommandRequest]) -> Accepted:
        return Accepted(version=await _command(request, table_id_of(table), caller, data))

    @websocket("/stream")
    async def stream(self, socket: WebSocket[Any, Any, Any], table: FromPath[str], after: FromQuery[int] = 0,
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
    settings = settings_in(socket)
    await socket.accept()
    player: str | None = None
    lang = language.of(socket)
    admission: Admission = socket.app.state.admission
    try:
        place = await admission.enter()  # a few starts at a time, first come first served
    except Busy:
        await _close_quietly(socket, TRY_AGAIN_LATER, "busy")
        return
    try:
        player = None if token is None else await player_of_token(socket, token)
        lang = language.of(socket)  # fixed for the socket's life: ?lang=, the player's setting, the header
        table_id = table_id_of(table)
        chat_cursor = chat.check_after(chat_after)
        state, version, reader = await reader_of(backend_in(socket), table_id, player)
        # The reader saw more than the store holds: writes were lost (a rollback). It gets
        # the table as it is now, marked, rather than nothing until the table passes its cursor.
        # ``acked``: the last version one of its commands was acknowledged with, which it may
        # not have seen as a view yet (the power cut came between the ack and the view)
        seen = max(after, acked)
        behind = seen > version
        if behind:
            socket.app.state.metrics.stream_rollbacks.inc()
            log.debug("stream_behind_cursor", table=table_id, after=after, version=version)
        address, backend = quotas.client_address(socket), backend_in(socket)
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
            place.leave()  # started: the stream follows its table (its first view is one read)
            try:
                await _follow(socket, table_id, reader, player, seen if behind else after, behind, (state, version),
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
    finally:
        place.leave()


async def _back(backend: BackendDep, table_id: str, player: str, state: TableState) -> None:
    """Opening one's stream brings an away seat back; a refusal (the table closed
    meanwhile) is no reason to close the stream."""
    try:
        await seats.back(backend, table_id, player, state)
    except MightyError as refused:
        log.debug("back_refused", table=table_id, code=refused.code)


_STORED_VIEW_WAITS: Final = 5
_STORED_VIEW_WAIT_S: Final = 0.1


async def _follow(socket: WebSocket[Any, Any, Any], table_id: str, reader: str, player: str | None,
                  after: int, behind: bool, table: tuple[TableState, int], send_timeout_s: float,
                  release: Callable[[], None], chat_after: str | None = None, lang: str = DEFAULT) -> None:
    """The stream proper: a pusher task sends each newer view while this one answers the
    client's frames (``behind``: the reader's cursor is past the table, so its current
    view goes first, marked ``rollback``). ``table``: the table and its version when the
    stream opened; a stored view older than that is not sent, the view is rendered here
    (the views worker folds them again after a Redis restart: docs/workers.md, "Kept off
    the AOF"). Each send waits at most ``send_timeout_s`` for
    a client that does not read; past it the socket is closed with 1013 (the client
    reconnects with ``after=``). Once the connection is over its quota slot is
    ``release``d, then the pusher stopped."""
    send = sockets.FrameSender(socket, send_timeout_s)  # one writer: the pusher and the command answers
    metrics: Metrics = socket.app.state.metrics
    pushed_at_once, pushed_queued = metrics.views_pushed.labels("at_once"), metrics.views_pushed.labels("queued")

    async def push() -> None:
        backend = backend_in(socket)
        # a table's turn_seconds is set when it is created: without it no push has a
        # deadline to read (one lookup for the stream, not a GET per push)
        entry = await backend.entry(table_id)
        timed = entry is None or entry.turn_seconds > 0
        last, cursor = after, 0 if behind else after
        state, version = table
        if behind or version > last:  # the reader is owed the table as it is now
            # a stored view a step behind the table is most often the views worker at work:
            # it is waited for a moment, since a view rendered here lacks what only the
            # worker folds (the turn's deadline, from the append times); a closed table's
            # seat view is not kept (``rendered``), nor waited for
            stored, waits = await backend.view(table_id, reader), 0
            if stored is None and state.status == "closed":
                waits = _STORED_VIEW_WAITS
            while (stored is None or api_view(stored).version < version) and waits < _STORED_VIEW_WAITS:
                await asyncio.sleep(_STORED_VIEW_WAIT_S)
                stored, waits = await backend.view(table_id, reader), waits + 1
            if stored is None or api_view(stored).version < version:
                document = await _document(backend, table_id, rendered(state, version, reader), timed, lang)
                await send(view_frame(document, rollback=behind))
                last = cursor = version
        def at_once(stored: bytes) -> bool:
            """A newer view pushed as it is published, in the hub's own call (no wake-up of
            this task, the most part of a push's cost besides the frame): when it needs
            nothing read and the frame can be written now. False: the loop below pushes it."""
            nonlocal last
            document = _document_at_once(stored, timed, lang)
            if document is None or document["version"] <= last or not send.now(view_frame(document)):
                return False
            last = document["version"]
            pushed_at_once.inc()
            return True

        # without a way to write at once, every view would be reshaped twice
        async for stored in backend.follow(table_id, reader, cursor, at_once if send.writes_at_once else None):
            document = await _document(backend, table_id, stored, timed, lang)
            if document["version"] <= last:
                # not newer than what the reader had (follow gives that only when a view
                # read again is older than the last one given): the store went back, or
                # the views are being folded again after a restart and the table is ahead
                state, now = await backend.state(table_id)
                if now == last:
                    continue  # the reader has the table as it is
                if now > document["version"]:
                    document = await _document(backend, table_id, rendered(state, now, reader), timed, lang)
            rollback = document["version"] <= last
            last = document["version"]
            await send(view_frame(document, rollback=rollback))
            pushed_queued.inc()

    async def push_chat() -> None:  # the table's chat, less what the reader muted (chat.py)
        async for said in backend_in(socket).chat.follow(table_id, player, chat_after):
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

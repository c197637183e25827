"""Every HTTP request is answered within ``STORE_DEADLINE_S`` and a second (docs/reliability.md):
an ASGI middleware, as Litestar has no timeout of its own; a route that waits on purpose
(quickplay) extends its own deadline (``extend``)."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import structlog
from litestar import Request
from litestar.response.base import ASGIResponse
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from services.gateway import (
    language,
)
from services.gateway.errors import ApiError, problem

log = structlog.get_logger("mighty.gateway")

# How long a command may wait for the store before it is answered 503 ``unavailable``; a
# request, one second longer (a command's own deadline goes first, counted as refused).
# Without it a Redis that stalls (stopped, swapping) held each call for the client's
# retries of its 5 s socket timeout: 35 s and more before any answer (docs/reliability.md).
STORE_DEADLINE_S = 3.0
DEADLINE_KEY = "mighty_deadline"  # the request's deadline (an asyncio.Timeout) in its scope


def too_slow() -> ApiError:
    return ApiError("unavailable", f"The event store did not answer within {STORE_DEADLINE_S:g} s. "
                    "Retry with the same command id.")


def extend(request: Request[Any, Any, Any], seconds: float | None) -> None:
    """Give a request that waits on purpose (quickplay) ``seconds`` more than the deadline;
    None: no deadline any more (the store has answered; computing the answer is left)."""
    deadline: asyncio.Timeout | None = request.scope.get(DEADLINE_KEY)  # type: ignore[assignment]
    if deadline is not None:
        if deadline.expired():  # too late: it is expiring (cancelling the request) or has
            raise too_slow()  # an expiring Timeout cannot be rescheduled (RuntimeError)
        deadline.reschedule(None if seconds is None
                            else asyncio.get_running_loop().time() + seconds + STORE_DEADLINE_S + 1.0)


def bounded(app: ASGIApp) -> ASGIApp:
    """Every HTTP request is answered within ``STORE_DEADLINE_S`` and a second: past it,
    503 ``unavailable`` (what it was waiting for is cancelled). A route that waits on
    purpose extends its own deadline (``extend``). A WebSocket is not bounded
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
                scope[DEADLINE_KEY] = deadline  # type: ignore[literal-required]
                await app(scope, receive, sending)
        except TimeoutError:
            if started:  # too late to answer otherwise: the client sees the answer cut short
                raise
            log.warning("request_too_slow", path=scope.get("path"), deadline_s=STORE_DEADLINE_S + 1.0)
            error = too_slow()
            answer = ASGIResponse(body=msgspec.json.encode(problem(error.code, error.message, language.of_scope(scope))),
                                  status_code=error.status, media_type="application/json")
            await answer(scope, receive, send)

    return middleware

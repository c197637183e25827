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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import structlog
from litestar import Litestar, Request, Router
from litestar.config.cors import CORSConfig
from litestar.datastructures import State
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from services.gateway import (
    deadline,
    quotas,
)
from services.gateway.admission import Admission
from services.gateway.backend import Backend
from services.gateway.bodies import MAX_BODY, json_bodies
from services.gateway.collector import Collector
from services.gateway.deps import (
    DEPENDENCIES,
)
from services.gateway.errors import EXCEPTION_HANDLERS
from services.gateway.metrics import Metrics
from services.gateway.ratings import LeaderboardsController
from services.gateway.routes.accounts import AccountsController, SessionsController
from services.gateway.routes.audit import AuditController
from services.gateway.routes.catalogue import GamesController, LanguagesController
from services.gateway.routes.chat import ChatController, MutesController
from services.gateway.routes.operations import OperationsController
from services.gateway.routes.play import MAX_FRAME, PlayController
from services.gateway.routes.players import PlayersController
from services.gateway.routes.tables import QuickplayController, TablesController
from services.gateway.sockets import SharedSockets, SocketCounts
from services.gateway.static import static_routers
from services.memory_trace import MemoryTrace
from services.settings import Settings

log = structlog.get_logger("mighty.gateway")

__all__ = ["MAX_FRAME", "create_app"]


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
        PlayersController, LeaderboardsController, GamesController, LanguagesController, TablesController,
        QuickplayController, PlayController, AuditController, AccountsController, SessionsController,
        ChatController, MutesController,
    ])
    openapi = OpenAPIConfig(
        title="Mighty", version="1", path="/schema",
        description="The HTTP and WebSocket API of the Mighty and Mitigati table service.",
        render_plugins=[JsonRenderPlugin(), SchemaPage()],
        components=Components(security_schemes={"bearer": SecurityScheme(type="http", scheme="bearer")}),
    )
    admission = Admission(settings.stream_starts, settings.stream_start_queue, settings.stream_start_wait_s)
    metrics = Metrics()
    metrics.watch_admission(admission)
    return Litestar(
        route_handlers=[api, OperationsController, *static_routers(settings)],
        dependencies=DEPENDENCIES,
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        request_max_body_size=MAX_BODY,
        cors_config=CORSConfig(allow_origins=list(settings.cors_origins)) if settings.cors_origins else None,
        openapi_config=openapi,
        middleware=[_log_requests, deadline.bounded, json_bodies],
        state=State({"backend": backend, "settings": settings, "metrics": metrics,
                     "collector": Collector(settings.gc_every_s),
                     "socket_counts": SocketCounts(settings.sockets_per_address, settings.sockets_per_player),
                     "shared_sockets": SharedSockets(settings.sockets_per_address, settings.sockets_per_player),
                     "admission": admission}),
        logging_config=None,  # the process's logging is structlog's (services/logs.py), tokens kept out
        lifespan=[lifespan],
    )

"""``mighty gateway [--host --port] [store options]``: the HTTP and WebSocket gateway
(``services/gateway/``) on uvicorn. Its settings are every process's
(``services/settings.py``: the store, then the gateway's own ``MIGHTY_*``); its backend
comes from ``services.bootstrap.bootstrap_gateway``, so without a Redis URL it says so
and exits 2, as every command that needs the store does."""

from __future__ import annotations

import argparse
import gc
import math
from typing import Any

from services.cli.common import EXIT_OK, settings
from services.settings import Settings, add_store_options


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("gateway", help="run the HTTP and WebSocket gateway (uvicorn)")
    parser.add_argument("--host", default=None, help="the address to listen on (default: $MIGHTY_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="the port (default: $MIGHTY_PORT or 8000)")
    add_store_options(parser)
    parser.set_defaults(run=cmd_gateway)


def cmd_gateway(args: argparse.Namespace) -> int:
    import uvicorn

    from services.bootstrap import bootstrap_gateway
    from services.gateway.app import MAX_FRAME, create_app

    found = settings(args)
    backend = bootstrap_gateway(found)  # NoStoreConfigured without a URL: exit 2
    app = create_app(found, backend)
    tune_gc()
    uvicorn.run(app, host=found.host, port=found.port, log_config=None, access_log=False,
                **connection_limits(found, MAX_FRAME))
    return EXIT_OK


# What a request's line and headers may take, together: past it, 431 (or 414) and the
# connection closed, before any of it reaches the app. A token is ~80 bytes.
MAX_REQUEST_HEAD = 16 * 1024
FRAME_MARGIN = 1024  # uvicorn's frame limit over the handler's: the handler closes 1009 first
BACKLOG = 2048  # connections the kernel queues before the gateway accepts them
KEEP_ALIVE_S = 5  # an idle HTTP keep-alive connection is closed after this


def connection_limits(settings: Settings, max_frame: int) -> dict[str, Any]:
    """uvicorn's limits on what a stranger's connection may hold (docs/gateway.md,
    *Sockets*): h11 (not httptools, which bounds no header) with the request head
    bounded; frames of 16 KiB and a margin; permessage-deflate only when the settings
    take it (``MIGHTY_WS_DEFLATE``); the server's WebSocket pings; the
    connections held at once; the keep-alive; the listen backlog; a SIGTERM's grace
    period, past which what is left is cancelled. The WebSocket protocol is uvicorn's,
    aborting a connection whose client stopped reading (``sockets.socket_protocol``)."""
    from services.gateway.sockets import socket_protocol

    return {
        "http": "h11", "h11_max_incomplete_event_size": MAX_REQUEST_HEAD,
        "ws": socket_protocol(), "ws_max_size": max_frame + FRAME_MARGIN, "ws_per_message_deflate": settings.ws_deflate,
        "ws_ping_interval": settings.ws_ping_interval_s, "ws_ping_timeout": settings.ws_ping_timeout_s,
        "limit_concurrency": settings.max_connections, "backlog": BACKLOG,
        "timeout_keep_alive": KEEP_ALIVE_S,
        "timeout_graceful_shutdown": max(1, math.ceil(settings.graceful_shutdown_s)),
    }


# Allocations between two collections of the youngest generation (CPython's default 700).
GC_YOUNG_THRESHOLD = 10_000


def tune_gc() -> None:
    """A long-running server's garbage collector: what the process built to start (the
    modules, the app, its routes) is frozen out of every collection, and the youngest
    generation is collected every 10,000 allocations rather than 700. With a thousand
    sockets the collector cost a gateway a quarter of its CPU (docs/performance.md)."""
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, 20, 100)

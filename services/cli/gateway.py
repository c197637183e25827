"""``mighty gateway [--host --port] [store options]``: the HTTP and WebSocket gateway
(``services/gateway/``) on uvicorn. Its settings are every process's
(``services/settings.py``: the store, then the gateway's own ``MIGHTY_*``); its backend
comes from ``services.bootstrap.bootstrap_gateway``, so without a Redis URL it says so
and exits 2, as every command that needs the store does."""

from __future__ import annotations

import argparse
import gc

from services.cli.common import EXIT_OK, settings
from services.settings import add_store_options


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
    # ws_max_size: a frame over 16 KiB closes the socket with 1009 (API.md, Playing)
    uvicorn.run(app, host=found.host, port=found.port, ws_max_size=MAX_FRAME,
                log_config=None, access_log=False)
    return EXIT_OK


# Allocations between two collections of the youngest generation (CPython's default 700).
GC_YOUNG_THRESHOLD = 10_000


def tune_gc() -> None:
    """A long-running server's garbage collector: what the process built to start (the
    modules, the app, its routes) is frozen out of every collection, and the youngest
    generation is collected every 10,000 allocations rather than 700. With a thousand
    sockets the collector cost a gateway a quarter of its CPU (docs/performance.md)."""
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, 20, 100)

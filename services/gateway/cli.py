"""``mighty gateway [--host --port]``: the gateway on uvicorn."""

from __future__ import annotations

import argparse
import os
from typing import Any


def cmd_gateway(args: argparse.Namespace) -> int:
    import uvicorn

    from services.gateway.app import create_app
    from services.gateway.settings import GatewaySettings

    settings = GatewaySettings.from_env()
    if args.redis_url:
        settings = GatewaySettings(**{**settings.__dict__, "redis_url": args.redis_url})
    # ws_max_size: a frame over 16 KiB closes the socket with 1009 (API.md, Playing)
    uvicorn.run(create_app(settings), host=args.host, port=args.port, ws_max_size=16 * 1024,
                log_config=None, access_log=False)
    return 0


def register(sub: Any) -> None:
    parser = sub.add_parser("gateway", help="run the HTTP and WebSocket gateway (uvicorn)")
    parser.add_argument("--host", default=os.environ.get("MIGHTY_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("MIGHTY_PORT", "8000")))
    parser.add_argument("--redis-url", default=None, help="default: $REDIS_URL")
    parser.set_defaults(run=cmd_gateway)

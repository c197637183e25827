"""``mighty serve [--host --port] [--cluster] [store options]``: the gateway and every
worker as separate processes (``services/serve.py``), on ``REDIS_URL`` when set, else a
private redis-server (with ``--cluster``: a local Redis Cluster of six, services/redis_cluster.py),
else the embedded fake Redis (as ``mighty demo``); prints the address to open; Ctrl-C
(SIGINT) or SIGTERM stops them all."""

from __future__ import annotations

import argparse
import sys

from services.cli.common import settings
from services.settings import add_durability_option, add_store_options


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("serve", help="run the gateway and every worker until Ctrl-C")
    parser.add_argument("--host", default=None, help="the address to listen on (default: $MIGHTY_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="the port (default: $MIGHTY_PORT or 8000)")
    parser.add_argument("--cluster", action="store_true",
                        help="start a local Redis Cluster (3 primaries, 3 replicas) instead of one redis-server")
    add_store_options(parser)
    add_durability_option(parser)
    parser.set_defaults(run=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from services.serve import run_serve

    def say(line: str) -> None:
        sys.stderr.write(f"mighty serve: {line}\n")
        sys.stderr.flush()

    return run_serve(settings(args), say, cluster=args.cluster)

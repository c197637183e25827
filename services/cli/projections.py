"""``mighty worker KIND`` and ``mighty projections rebuild|check|lag|ledger|lobby``.

Every command that needs Redis uses ``REDIS_URL`` when set (or ``--redis-url``); the
projections commands otherwise have nothing to read, so they say so and stop.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

import msgspec

from projections import KINDS

EXIT_OK, EXIT_DIFFERENT, EXIT_USAGE = 0, 1, 2


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worker = sub.add_parser("worker", help="run a projection worker until SIGTERM or SIGINT")
    worker.add_argument("kind", choices=KINDS)
    _redis_options(worker)
    worker.add_argument("--batch", type=int, default=500, help="feed entries read per batch")
    worker.add_argument("--block-ms", type=int, default=100, help="how long a read waits for news")
    worker.add_argument("--lease-ms", type=int, default=3000,
                        help="a dead worker's partitions are taken over after this long")
    worker.add_argument("--id", default=None, help="the worker's consumer name (default: host-pid-random)")
    worker.add_argument("--linger-ms", type=int, default=10,
                        help="after a read that did not fill a batch, wait this long for more")
    worker.add_argument("--no-publish", action="store_true", help="store views without notifying")
    worker.add_argument("--keep-feed", action="store_true",
                        help="do not trim the feed below the slowest kind's checkpoint (benchmarks)")
    worker.set_defaults(run=cmd_worker)

    projections = sub.add_parser("projections", help="rebuild, check and read the projections")
    what = projections.add_subparsers(dest="action", required=True)
    for name, run, text in (
        ("rebuild", cmd_rebuild, "recompute from the streams and store the result"),
        ("check", cmd_check, "compare what is stored with a rebuild, byte for byte (exit 1 if different)"),
        ("lag", cmd_lag, "print how far each partition is behind its feed"),
    ):
        action = what.add_parser(name, help=text)
        action.add_argument("kind", nargs="?", choices=KINDS, help="one kind (default: all)")
        _redis_options(action)
        action.set_defaults(run=run)
    dead = what.add_parser("dead-letters", help="list the feed entries a kind passed over")
    dead.add_argument("--kind", choices=KINDS, default=None, help="one kind (default: all)")
    _redis_options(dead)
    dead.set_defaults(run=cmd_dead_letters)
    for name, run, text in (
        ("ledger", cmd_ledger, "print every player's ledger over all tables"),
        ("lobby", cmd_lobby, "print the lobby directory"),
    ):
        action = what.add_parser(name, help=text)
        _redis_options(action)
        action.set_defaults(run=run)


def _redis_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL"), help="default: $REDIS_URL")
    parser.add_argument("--partitions", type=int, default=None, help="default: $MIGHTY_PARTITIONS or 16")
    parser.add_argument("--namespace", default=os.environ.get("MIGHTY_NAMESPACE", "mighty"),
                        help="key prefix (default: $MIGHTY_NAMESPACE or mighty)")


def _connect(args: argparse.Namespace) -> tuple[Any, Any]:
    from services.store.keys import KeySpace
    from services.store.redis_store import connect

    if not args.redis_url:
        sys.stderr.write("mighty: set REDIS_URL (or --redis-url) to the Redis the tables live in\n")
        raise SystemExit(EXIT_USAGE)
    return connect(args.redis_url), KeySpace(args.partitions, namespace=args.namespace)


def _print(value: object) -> None:
    sys.stdout.write(msgspec.json.encode(value).decode() + "\n")


def cmd_worker(args: argparse.Namespace) -> int:
    from services.logs import configure_logging
    from services.projection.worker import Worker

    configure_logging()
    client, space = _connect(args)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    worker = Worker(client, args.kind, space=space, worker_id=args.id, batch=args.batch,
                    block_ms=args.block_ms, lease_ms=args.lease_ms, publish=not args.no_publish,
                    linger_ms=args.linger_ms, trim=not args.keep_feed)
    worker.run(stop)
    return EXIT_OK


def _each_partition(args: argparse.Namespace, action: Callable[[Any, int], object]) -> list[object]:
    from services.logs import configure_logging
    from services.projection.keys import ProjectionKeys
    from services.projection.store import ProjectionStore

    configure_logging()
    client, space = _connect(args)
    results: list[object] = []
    for kind in [args.kind] if args.kind else list(KINDS):
        store = ProjectionStore(client, ProjectionKeys(space, kind))
        results.extend(action(store, p) for p in range(space.partitions))
    return results


def cmd_rebuild(args: argparse.Namespace) -> int:
    from services.projection.rebuild import rebuild

    done = _each_partition(args, rebuild)
    _print({"kinds": [args.kind] if args.kind else list(KINDS), "partitions": len(done),
            "entries": sum(getattr(c, "count", 0) for c in done)})
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    from services.projection.rebuild import check

    found = [d for differences in _each_partition(args, check) for d in differences]  # type: ignore[attr-defined]
    for difference in found:
        _print({"partition": difference.partition, "doc": list(difference.doc),
                "stored": _text(difference.stored), "rebuilt": _text(difference.rebuilt)})
    _print({"identical": not found, "differences": len(found)})
    return EXIT_OK if not found else EXIT_DIFFERENT


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode()


def cmd_lag(args: argparse.Namespace) -> int:
    from services.projection.read import lag

    client, space = _connect(args)
    for kind in [args.kind] if args.kind else list(KINDS):
        for row in lag(client, space, kind):
            _print(row)
    return EXIT_OK


def cmd_dead_letters(args: argparse.Namespace) -> int:
    from services.projection.keys import ProjectionKeys
    from services.projection.store import ProjectionStore

    client, space = _connect(args)
    for kind in [args.kind] if args.kind else list(KINDS):
        store = ProjectionStore(client, ProjectionKeys(space, kind))
        for partition in range(space.partitions):
            for dead in store.dead_letters(partition):
                _print({"kind": dead.kind, "partition": partition, "feed_id": dead.feed_id,
                        "table": dead.table_id, "version": dead.version, "reason": dead.reason})
    return EXIT_OK


def cmd_ledger(args: argparse.Namespace) -> int:
    from services.projection.read import player_ledgers

    client, space = _connect(args)
    _print(player_ledgers(client, space))
    return EXIT_OK


def cmd_lobby(args: argparse.Namespace) -> int:
    from services.projection.read import lobby

    client, space = _connect(args)
    _print(lobby(client, space))
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """``python -m services.projection KIND ...``: the same as ``mighty worker KIND ...``."""
    parser = argparse.ArgumentParser(prog="python -m services.projection")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    with contextlib.suppress(KeyboardInterrupt):
        args = parser.parse_args(["worker", *(sys.argv[1:] if argv is None else argv)])
        run: Callable[[argparse.Namespace], int] = args.run
        return run(args)
    return EXIT_OK

"""``mighty worker KIND`` (also ``python -m services.projection KIND``): one projection
worker process, until SIGTERM or SIGINT; ``mighty worker archive``: the archive worker,
which moves closed tables into PostgreSQL (docs/archive.md); ``mighty worker bots``: the
bot worker, which plays the seats the service plays (docs/bots.md); ``mighty worker
timers``: plays a seat whose turn's time ran out. It takes its store from the settings
(``--redis-url``/``REDIS_URL``, ``--namespace``/``MIGHTY_NAMESPACE``,
``--partitions``/``MIGHTY_PARTITIONS``) and refuses to start without a URL."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable

import structlog

from projections import KINDS
from services.bootstrap import Wiring, check_durability
from services.cli.common import EXIT_OK, wired, write_json_line
from services.settings import add_store_options
from services.store.errors import StoreUnavailable

log = structlog.get_logger("mighty.workers")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worker = sub.add_parser("worker", help="run a projection worker (or the archive worker) until SIGTERM or SIGINT")
    worker.add_argument("kind", choices=(*KINDS, ARCHIVE, BOTS, TIMERS))
    add_store_options(worker)
    worker.add_argument("--batch", type=int, default=500, help="feed entries read per batch")
    worker.add_argument("--block-ms", type=int, default=100, help="how long a read waits for news")
    worker.add_argument("--lease-ms", type=int, default=3000,
                        help="a dead worker's partitions are taken over after this long (projection and bot workers)")
    worker.add_argument("--id", default=None, help="the worker's consumer name (default: host-pid-random)")
    worker.add_argument("--keep-feed", action="store_true",
                        help="do not trim the feed below the slowest kind's checkpoint (benchmarks)")
    worker.add_argument("--linger-ms", type=int, default=None,
                        help="after a read that did not fill a batch, wait this long for more "
                             "(default: the kind's, 10 for views, 50 for the others)")
    worker.add_argument("--no-publish", action="store_true", help="store views without notifying")
    bots = worker.add_argument_group("bots (mighty worker bots)")
    bots.add_argument("--playouts", type=int, default=None,
                      help="the expert's playouts per decision (default: the game's, docs/bots.md)")
    archive = worker.add_argument_group("archive (mighty worker archive)")
    archive.add_argument("--archive-after-s", default=None,
                         help="archive tables closed this long ago (default: $MIGHTY_ARCHIVE_AFTER_S or 3600)")
    archive.add_argument("--interval-s", type=float, default=30.0, help="seconds between two passes")
    archive.add_argument("--once", action="store_true", help="one pass, print what it did as JSON, exit")
    worker.set_defaults(run=cmd_worker)


ARCHIVE = "archive"
BOTS = "bots"
TIMERS = "timers"


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def _wired_once_reachable(args: argparse.Namespace, stop: threading.Event) -> Wiring | None:
    """The wiring, waiting (with a growing pause, at most 2 s) while the store cannot be
    reached: a cluster's client asks a node for the slot map as it is built, so a worker
    started while the cluster is down would otherwise exit. None when stopped first.
    Logged as the worker loop logs an outage (once, then once it is over)."""
    failures = 0
    while not stop.is_set():
        try:
            wiring = wired(args)
        except StoreUnavailable as error:
            failures += 1
            if failures == 1:
                log.warning("redis unreachable", error=error.message)
            stop.wait(min(2.0, 0.05 * 2.0 ** min(failures - 1, 6)))
            continue
        if failures:
            log.warning("redis reachable again", failures=failures)
        return wiring
    return None


def _traced(wiring: Wiring, stop: threading.Event) -> None:
    """The memory trace on a thread of the worker's, when ``MIGHTY_DEBUG_TRACEMALLOC_S``
    asks for it (services/memory_trace.py)."""
    if wiring.settings.debug_tracemalloc_s > 0:
        from services.memory_trace import MemoryTrace

        MemoryTrace().in_thread(wiring.settings.debug_tracemalloc_s, stop)


def cmd_worker(args: argparse.Namespace) -> int:
    if args.kind == ARCHIVE:
        return cmd_archive(args)
    if args.kind in (BOTS, TIMERS):
        return cmd_bots(args)
    stop = _stop_on_signals()
    wiring = _wired_once_reachable(args, stop)
    if wiring is None:
        return EXIT_OK
    check_durability(wiring.client, wiring.settings)
    _traced(wiring, stop)
    worker = wiring.worker(args.kind, worker_id=args.id, batch=args.batch, block_ms=args.block_ms,
                           lease_ms=args.lease_ms, publish=not args.no_publish, linger_ms=args.linger_ms,
                           trim=not args.keep_feed, summary_s=wiring.settings.summary_s)
    worker.run(stop)
    return EXIT_OK


def cmd_bots(args: argparse.Namespace) -> int:
    """The bot worker, or the timer worker: both follow the turns."""
    from domain.bots import Budget
    from services.bots.timers import TimerWorker
    from services.bots.worker import BotWorker

    stop = _stop_on_signals()
    wiring = _wired_once_reachable(args, stop)
    if wiring is None:
        return EXIT_OK
    _traced(wiring, stop)
    if args.kind == BOTS:
        budget = Budget(playouts=args.playouts)
        BotWorker(wiring.client, wiring.space, wiring.handler, budget=budget, worker_id=args.id,
                  lease_ms=args.lease_ms).serve(stop)  # rides out a Redis outage
    else:
        TimerWorker(wiring.client, wiring.space, wiring.handler, idle_s=wiring.settings.idle_s,
                    summary_s=wiring.settings.summary_s,
                    away_after=wiring.settings.away_after_timeouts,
                    away_after_gone_s=wiring.settings.away_after_gone_s).serve(stop)
    return EXIT_OK


def cmd_archive(args: argparse.Namespace) -> int:
    if args.once:
        worker = wired(args).archive_worker(worker_id=args.id)
        worker.archive.migrate()
        write_json_line(worker.run_once().as_dict())
        return EXIT_OK
    stop = _stop_on_signals()
    wiring = _wired_once_reachable(args, stop)
    if wiring is None:
        return EXIT_OK
    _traced(wiring, stop)
    wiring.archive_worker(worker_id=args.id).run(stop, interval_s=args.interval_s)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """``python -m services.projection KIND ...``: the same as ``mighty worker KIND ...``."""
    from services.cli import main as mighty

    run: Callable[[list[str]], int] = mighty
    return run(["worker", *(sys.argv[1:] if argv is None else argv)])

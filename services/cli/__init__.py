"""The ``mighty`` command line: the parser and the dispatch; one module per command group.

| module | commands |
|---|---|
| ``replay`` | ``replay FILE`` (no store) |
| ``demo`` | ``demo`` (may start its own Redis) |
| ``audit`` | ``verify``, ``export``, ``log`` |
| ``chat`` | ``chat mute|unmute|muted`` (an operator's mute of a player's chat, everywhere) |
| ``projections`` | ``projections rebuild|check|lag|ledger|lobby`` |
| ``worker`` | ``worker KIND`` (a long-running process) |
| ``gateway`` | ``gateway`` (the HTTP and WebSocket server, a long-running process) |
| ``serve`` | ``serve`` (the gateway and every worker as processes; may start its own Redis) |
| ``play`` | ``play`` (the terminal client of clients/terminal/: a client of the public API only) |
| ``bench`` | ``bench domain|store|projections`` |

Every command that reads or writes the store gets it from ``services.bootstrap`` with the
same options (``--redis-url``/``REDIS_URL``, ``--namespace``/``MIGHTY_NAMESPACE``,
``--partitions``/``MIGHTY_PARTITIONS``). Failures are one line on stderr with an exit
status (``common.EXIT_*``), never a traceback; output into a closed pipe ends quietly.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence

import redis

from domain.errors import MightyError
from services.archive.errors import ArchiveUnavailable
from services.cli import audit, bench, chat, demo, gateway, play, projections, replay, serve, worker
from services.cli.common import (
    EXIT_BROKEN_FILE,
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REJECTED,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
)
from services.settings import SettingsError
from services.store.cluster import CLUSTER_UNAVAILABLE
from services.store.errors import StoreUnavailable

__all__ = ["EXIT_BROKEN_FILE", "EXIT_BROKEN_PIPE", "EXIT_OK", "EXIT_REJECTED", "EXIT_UNAVAILABLE", "EXIT_USAGE",
           "build_parser", "main"]

COMMAND_GROUPS = (replay, demo, audit, chat, projections, worker, gateway, serve, play, bench)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mighty", description="The Mighty table service.")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in COMMAND_GROUPS:
        group.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except BrokenPipeError:  # --help into a closed pipe
        return _quiet_broken_pipe()
    run: Callable[[argparse.Namespace], int] = args.run
    name = " ".join(part for part in (args.command, getattr(args, "action", None)) if part)
    try:
        code = run(args)
        sys.stdout.flush()  # here, so a closed pipe is met inside the try
        return code
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except SettingsError as error:  # no store named, a bad MIGHTY_* value
        sys.stderr.write(f"mighty {name}: {error.message}\n")
        return EXIT_USAGE
    except (StoreUnavailable, redis.ConnectionError, redis.TimeoutError, *CLUSTER_UNAVAILABLE) as error:
        message = error.message if isinstance(error, StoreUnavailable) else f"Redis is unreachable: {error}"
        setting = "MIGHTY_ARCHIVE_URL" if isinstance(error, ArchiveUnavailable) else "REDIS_URL"
        sys.stderr.write(f"mighty {name}: {message} (is {setting} right?)\n")
        return EXIT_UNAVAILABLE
    except MightyError as error:  # a bad table id, command id, …: the typed refusal, no traceback
        sys.stderr.write(f"mighty {name}: {error.code}: {error.message}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _quiet_broken_pipe() -> int:
    """The reader went away (``mighty replay FILE | head``): stop quietly. Standard output
    is pointed at /dev/null so the interpreter's last flush at exit cannot fail again
    (the Python docs' recipe for SIGPIPE), and the status is a shell's for SIGPIPE."""
    with contextlib.suppress(OSError, ValueError):  # a stdout with no file descriptor
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_BROKEN_PIPE

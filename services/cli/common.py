"""What every ``mighty`` command shares: exit codes, the settings, the store, the output.

A CLI command's output is its interface, so this package prints; services log.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Final

import msgspec

from services.settings import Settings, settings_from

if TYPE_CHECKING:  # the store's modules load only for a command that uses them
    from services.bootstrap import Wiring

EXIT_OK: Final = 0
EXIT_DIFFERENT: Final = 1  # verify, projections check: a difference was found
EXIT_USAGE: Final = 2  # bad input: a broken file, a bad id, no store named, nothing found
EXIT_BROKEN_FILE: Final = EXIT_USAGE
EXIT_REJECTED: Final = 3  # replay: the hand file holds a refused command
EXIT_UNAVAILABLE: Final = 4  # Redis could not be reached
EXIT_INTERRUPTED: Final = 130
EXIT_BROKEN_PIPE: Final = 141  # what a shell reports for a process ended by SIGPIPE


def settings(args: argparse.Namespace) -> Settings:
    """The command's settings (flags, then environment), with logging configured by them."""
    from services.logs import configure_logging

    found = settings_from(args)
    configure_logging(found)
    return found


def wired(args: argparse.Namespace) -> Wiring:
    """The store and its readers for a command that needs an existing store (refused
    with ``NoStoreConfigured`` when no URL is set)."""
    from services.bootstrap import bootstrap

    return bootstrap(settings(args))


def where(wiring: Wiring) -> str:
    """Where a command looked, for a message that found nothing."""
    return f"under namespace {wiring.space.namespace!r} at {wiring.settings.redis_url}"


def no_events(wiring: Wiring, table_id: str) -> str:
    return (f"table {table_id} has no events {where(wiring)} (is --namespace right? "
            "verify --all with the same options lists the tables there)")


def fail(command: str, message: str, code: int = EXIT_USAGE) -> int:
    sys.stderr.write(f"mighty {command}: {message}\n")
    return code


def write_line(text: str) -> None:
    sys.stdout.write(text + "\n")


def write_json_line(value: object) -> None:
    sys.stdout.write(msgspec.json.encode(value).decode() + "\n")


def write_json(value: object) -> None:
    """Indented, for a document a person reads (a replay's outcome, an exported hand)."""
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(value), indent=2).decode() + "\n")

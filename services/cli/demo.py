"""``mighty demo``: play random tables end to end (``services/demo.py``), print the ledger,
then where the tables are and the exact commands that inspect them.

The demo is one of the two commands that may start a Redis of its own (``serve`` later):
``REDIS_URL``/``--redis-url`` when set, else a private redis-server that stops with it,
else an embedded fake Redis. Only in the first do its tables outlive it.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Final

import msgspec

from services.cli.common import EXIT_OK, EXIT_USAGE, fail, write_line
from services.demo import DemoResult
from services.settings import Settings, add_durability_option, add_store_options, settings_from

# The demo's progress line is its output on stderr: its services log warnings only,
# unless MIGHTY_LOG_LEVEL says otherwise.
_DEFAULTS: Final = {"log_level": "warning"}
_LISTED_TABLES: Final = 8


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = sub.add_parser("demo", help="play random tables end to end and print the ledger")
    demo.add_argument("--tables", type=int, default=4, help="tables played at once (default 4)")
    demo.add_argument("--hands", type=int, default=3, help="scored hands per table (default 3)")
    demo.add_argument("--seed", type=int, default=None, help="seed the players' choices (not the deals)")
    demo.add_argument("--variant", default="mighty-5",
                      help="the game at every table: a Mighty variant (default mighty-5) or mitigati")
    demo.add_argument("--json", action="store_true",
                      help="print one JSON object: hands, ledger, and where the tables are")
    add_store_options(demo)
    add_durability_option(demo)
    demo.set_defaults(run=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    from services.app.lifecycle import Lifecycle
    from services.demo import run_demo
    from services.logs import configure_logging

    if args.tables < 1 or args.hands < 1:
        return fail("demo", "--tables and --hands are at least 1")
    problem = unknown_variant(args.variant)
    if problem:
        return fail("demo", problem, EXIT_USAGE)
    settings = settings_from(args, defaults=_DEFAULTS)
    most = Lifecycle.of(settings).max_hands  # a table's match is bounded (services/app/lifecycle.py)
    if args.hands > most:
        return fail("demo", f"--hands is at most {most} (a table's longest match)", EXIT_USAGE)
    configure_logging(settings)
    result = run_demo(settings, args.tables, args.hands, seed=args.seed, variant=args.variant)
    if args.json:
        document = {**msgspec.to_builtins(result), "inspect": inspect_commands(result)}
        write_line(msgspec.json.encode(document).decode())
    else:
        print_ledger(result)
        print_where(result)
    return EXIT_OK


def known_variants() -> list[str]:
    from domain.registry import variants

    return list(variants())


def unknown_variant(variant: str) -> str | None:
    """The refusal for a variant no game plays (both games' variants listed), or None."""
    from domain.errors import RuleSetError, TableError
    from domain.registry import game_named

    if variant not in known_variants():
        return f"unknown variant {variant!r}; known: {', '.join(known_variants())}"
    try:
        game_named(variant).make_rules(variant, {})
    except (RuleSetError, TableError) as error:
        return error.message
    return None


def print_ledger(result: DemoResult) -> None:
    write_line(f"{result.hands} hands played; the ledger:")
    write_line(f"{'player':<8} {'total':>6}  id")
    for row in result.ledger:
        write_line(f"{row['name']:<8} {row['total']:>6}  {row['player']}")
    write_line(f"{'sum':<8} {sum(r['total'] for r in result.ledger):>6}")


def inspect_commands(result: DemoResult) -> list[str]:
    """The commands that read this run's tables, as a shell takes them (none when the
    tables went with the demo's own Redis)."""
    if result.redis != "given":
        return []
    store = Settings(redis_url=result.redis_url, namespace=result.namespace,
                     partitions=result.partitions).store_flags()
    first = result.tables[0]
    return [shlex.join(["mighty", *argv, *store]) for argv in (
        ["verify", "--all"],
        ["log", first],
        ["export", first, "--hand", "1"],
        ["projections", "ledger"],
    )]


def print_where(result: DemoResult) -> None:
    shown = result.tables[:_LISTED_TABLES]
    more = len(result.tables) - len(shown)
    tables = ", ".join(shown) + (f" and {more} more (verify --all lists them)" if more else "")
    write_line("")
    if result.redis == "given":
        write_line(f"The tables are in {result.redis_url} under namespace {result.namespace}: {tables}.")
        write_line("Inspect them with:")
        for command in inspect_commands(result):
            write_line(f"  {command}")
        return
    where = ("a private redis-server that stopped with the demo" if result.redis == "private"
             else "an embedded Redis inside the demo's process")
    write_line(f"The tables ({tables}) were in {where}: they are gone.")
    write_line("To keep them, run the demo against a Redis that outlives it (redis-server deploy/redis.conf):")
    write_line("  REDIS_URL=redis://HOST:PORT/0 mighty demo")
    write_line("and it prints the commands that inspect them.")
    sys.stdout.flush()

"""The ``mighty`` command line: replay, demo, serve, worker, verify, export, log, bench.

A CLI command's output is its interface, so this module prints; services log.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
import redis

from domain.errors import MightyError
from services.store.errors import StoreUnavailable

EXIT_OK, EXIT_BROKEN_FILE, EXIT_REJECTED, EXIT_UNAVAILABLE, EXIT_INTERRUPTED = 0, 2, 3, 4, 130


def _write_json(value: object) -> None:
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(value), indent=2).decode() + "\n")


def cmd_replay(args: argparse.Namespace) -> int:
    from domain.errors import HandFileError
    from domain.mighty.handfile import output_of, parse, replay, rules_named

    try:
        data = Path(args.file).read_bytes() if args.file != "-" else sys.stdin.buffer.read()
    except OSError as error:
        sys.stderr.write(f"mighty replay: cannot read {args.file}: {error.strerror}\n")
        return EXIT_BROKEN_FILE
    if rules_named(data) == "mitigati":
        return _replay_mitigati(args, data)
    try:
        hand_file, rules = parse(data)
    except HandFileError as error:
        sys.stderr.write(f"mighty replay: {args.file}: {error.message}\n")
        return EXIT_BROKEN_FILE
    if args.as_seat is not None and not 0 <= args.as_seat < rules.spec.players:
        sys.stderr.write(f"mighty replay: --as {args.as_seat} is not a seat of {rules.variant}\n")
        return EXIT_BROKEN_FILE
    outcome = replay(hand_file, rules, as_seat=args.as_seat)
    _print_replay(outcome.steps, outcome.rejected, lambda: output_of(outcome))
    return EXIT_REJECTED if outcome.rejected is not None else EXIT_OK


def _replay_mitigati(args: argparse.Namespace, data: bytes) -> int:
    """The same command for a ``"rules": "mitigati"`` file (mitigati-hand-file.md §9)."""
    from domain.errors import HandFileError
    from domain.mitigati.handfile import output_of, parse, replay
    from domain.mitigati.rules import PLAYERS

    try:
        hand_file, rules = parse(data)
    except HandFileError as error:
        sys.stderr.write(f"mighty replay: {args.file}: {error.message}\n")
        return EXIT_BROKEN_FILE
    if args.as_seat is not None and not 0 <= args.as_seat < PLAYERS:
        sys.stderr.write(f"mighty replay: --as {args.as_seat} is not a seat of {rules.variant}\n")
        return EXIT_BROKEN_FILE
    outcome = replay(hand_file, rules, as_seat=args.as_seat)
    _print_replay(outcome.steps, outcome.rejected, lambda: output_of(outcome))
    return EXIT_REJECTED if outcome.rejected is not None else EXIT_OK


def _print_replay(steps: Sequence[object] | None, rejected: object | None,
                  document: Callable[[], object]) -> None:
    """--as: one line per step, then the refusal; otherwise the whole outcome."""
    if steps is not None:
        for step in steps:
            sys.stdout.write(msgspec.json.encode(step).decode() + "\n")
        if rejected is not None:
            sys.stdout.write(msgspec.json.encode({"rejected": rejected}).decode() + "\n")
    else:
        _write_json(document())


def cmd_bench(args: argparse.Namespace) -> int:
    import importlib

    module = importlib.import_module(f"bench.{args.what}")
    rc: int = module.main(args.rest + (["--json"] if args.json else []))
    return rc


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mighty", description="The Mighty table service.")
    sub = parser.add_subparsers(dest="command", required=True)
    replay = sub.add_parser("replay", help="replay a hand file through the rules alone")
    replay.add_argument("file", help="a hand file (mighty-hand/1), or - for standard input")
    replay.add_argument("--as", dest="as_seat", type=int, default=None,
                        help="print the replay step by step as this seat saw it")
    replay.set_defaults(run=cmd_replay)
    bench = sub.add_parser("bench", help="run a benchmark and print JSON")
    bench.add_argument("what", choices=["domain", "store", "projections"])
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.add_argument("rest", nargs=argparse.REMAINDER)
    bench.set_defaults(run=cmd_bench)
    for extra in EXTRA_COMMANDS:
        extra(sub)
    return parser


# Other modules (store, workers, demo) register their subcommands here.
EXTRA_COMMANDS: list[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]] = []


def main(argv: Sequence[str] | None = None) -> int:
    from services.logs import configure_logging

    configure_logging()
    _load_extensions()
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except (StoreUnavailable, redis.ConnectionError, redis.TimeoutError) as error:
        message = error.message if isinstance(error, StoreUnavailable) else f"Redis is unreachable: {error}"
        sys.stderr.write(f"mighty {args.command}: {message} (is REDIS_URL right?)\n")
        return EXIT_UNAVAILABLE
    except MightyError as error:  # a bad table id, command id, …: the typed refusal, no traceback
        sys.stderr.write(f"mighty {args.command}: {error.code}: {error.message}\n")
        return EXIT_BROKEN_FILE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _load_extensions() -> None:
    import importlib

    for name in ("services.audit", "services.store.cli", "services.cli.projections", "services.demo",
                 "services.gateway.cli"):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name is None or not name.startswith(error.name):
                raise
            continue
        register = getattr(module, "register", None)
        if register is not None and register not in EXTRA_COMMANDS:
            EXTRA_COMMANDS.append(register)


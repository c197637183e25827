"""``mighty replay FILE [--as SEAT]``: a hand file through the rules alone, no store.

The standard output is fixed by docs/hand-files.md, Mighty's and Mitigati's (the
whole outcome, or ``--as``: one line per step, then the refusal). A refused command is
also said in one line on stderr, so it is not lost at the end of a long output.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from services.cli.common import (
    EXIT_BROKEN_FILE,
    EXIT_OK,
    EXIT_REJECTED,
    write_json,
    write_json_line,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    replay = sub.add_parser("replay", help="replay a hand file through the rules alone")
    replay.add_argument("file", help="a hand file (mighty-hand/1), or - for standard input")
    replay.add_argument("--as", dest="as_seat", type=int, default=None,
                        help="print the replay step by step as this seat saw it")
    replay.set_defaults(run=cmd_replay)


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay a hand file of any game: its ``rules`` field names the game
    (``registry.game_of_hand_file``)."""
    from domain.errors import HandFileError
    from domain.registry import game_of_hand_file

    try:
        data = Path(args.file).read_bytes() if args.file != "-" else sys.stdin.buffer.read()
    except OSError as error:
        sys.stderr.write(f"mighty replay: cannot read {args.file}: {error.strerror}\n")
        return EXIT_BROKEN_FILE
    try:
        run = game_of_hand_file(data).read_hand_file(data)
    except HandFileError as error:
        sys.stderr.write(f"mighty replay: {args.file}: {error.message}\n")
        return EXIT_BROKEN_FILE
    if args.as_seat is not None and not 0 <= args.as_seat < run.players:
        sys.stderr.write(f"mighty replay: --as {args.as_seat} is not a seat of {run.variant}\n")
        return EXIT_BROKEN_FILE
    outcome = run.replay(args.as_seat)
    _print_replay(outcome.steps, outcome.rejected, outcome.document)
    if outcome.rejected is None:
        return EXIT_OK
    sys.stdout.flush()  # the document first, then the summary after it on a terminal
    sys.stderr.write(f"mighty replay: {args.file}: {refusal_line(outcome.rejected)}\n")
    return EXIT_REJECTED


def refusal_line(rejected: Any) -> str:
    """One line for the ``rejected`` object: which command (its index in the file's
    ``commands``, counted from 0 as docs/hand-files.md does), whose, and why."""
    seat = "" if rejected.seat is None else f" (seat {rejected.seat})"
    return f"commands[{rejected.index}]{seat} refused: {rejected.code}: {rejected.message}"


def _print_replay(steps: Sequence[object] | None, rejected: object | None,
                  document: Callable[[], object]) -> None:
    """--as: one line per step, then the refusal; otherwise the whole outcome."""
    if steps is not None:
        for step in steps:
            write_json_line(step)
        if rejected is not None:
            sys.stdout.write(msgspec.json.encode({"rejected": rejected}).decode() + "\n")
    else:
        write_json(document())

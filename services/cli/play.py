"""``mighty play [--url --name]``: the terminal client (``clients/terminal/``, Textual),
a client of the gateway's public API like any other (docs/terminal.md)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from services.cli.common import EXIT_OK, EXIT_UNAVAILABLE
from services.i18n.catalogs import LANGS


def cmd_play(args: argparse.Namespace) -> int:
    from clients.terminal.app import run

    failure = run(args.url, args.name, args.config, args.wait, args.lang)
    if failure:
        sys.stderr.write(f"mighty play: {failure}\n")
        return EXIT_UNAVAILABLE
    return EXIT_OK


def register(sub: Any) -> None:
    parser = sub.add_parser("play", help="play at a gateway from the terminal")
    parser.add_argument("--url", default=os.environ.get("MIGHTY_URL", "http://127.0.0.1:8000"),
                        help="the gateway (default: $MIGHTY_URL or http://127.0.0.1:8000)")
    parser.add_argument("--name", default=None, help="log in as a new guest of this name")
    parser.add_argument("--config", type=Path, default=None,
                        help="where the guest's token is kept (default: ~/.config/mighty/play.json)")
    parser.add_argument("--wait", type=float, default=10.0,
                        help="quick play: seconds to wait for other players before bots fill the seats")
    parser.add_argument("--lang", choices=LANGS, default=None,
                        help="the language of the server's words: commands' labels, the games' names, "
                             "refusals (default: the player's setting, else English)")
    parser.set_defaults(run=cmd_play)

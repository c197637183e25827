"""``mighty bench domain|store|projections [--json] [ARGS...]``: a benchmark of
``bench/``, which prints JSON; its own arguments follow (``mighty bench store --help``)."""

from __future__ import annotations

import argparse
import importlib


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = sub.add_parser("bench", help="run a benchmark and print JSON")
    bench.add_argument("what", choices=["domain", "store", "projections"])
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.add_argument("rest", nargs=argparse.REMAINDER)
    bench.set_defaults(run=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    module = importlib.import_module(f"bench.{args.what}")
    rc: int = module.main(args.rest + (["--json"] if args.json else []))
    return rc

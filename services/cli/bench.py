"""``mighty bench NAME [--json] [ARGS...]``: a benchmark of ``bench/`` (every module there
with a ``main``), which prints JSON; its own arguments follow (``mighty bench store --help``)."""

from __future__ import annotations

import argparse
import importlib
import pkgutil

import bench


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = sub.add_parser("bench", help="run a benchmark and print JSON")
    bench.add_argument("what", choices=benchmarks())
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.add_argument("rest", nargs=argparse.REMAINDER)
    bench.set_defaults(run=cmd_bench)


def benchmarks() -> list[str]:
    """The benchmarks: the modules of ``bench/``, a new one listed by being there."""
    return sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if not m.name.startswith("_"))


def cmd_bench(args: argparse.Namespace) -> int:
    from services.logs import configure_logging

    configure_logging()  # to stderr, at the environment's level: standard output is the JSON alone
    module = importlib.import_module(f"bench.{args.what}")
    rc: int = module.main(args.rest + (["--json"] if args.json else []))
    return rc

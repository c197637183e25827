"""The ``mighty verify``, ``mighty export`` and ``mighty log`` commands."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import msgspec

from services.audit.export import export_hand
from services.audit.log import describe
from services.audit.verify import verify_events
from services.store.base import EventStore, StoredEvent


def _store(args: argparse.Namespace) -> EventStore:
    from services.store.redis_store import RedisEventStore, connect

    return RedisEventStore(connect(args.redis_url))


def cmd_verify(args: argparse.Namespace) -> int:
    store = _store(args)
    if args.all == (args.table is not None):
        sys.stderr.write("mighty verify: name one TABLE, or --all\n")
        return 2
    if not args.all:
        stored = store.read(args.table)
        if not stored:
            sys.stderr.write(f"mighty verify: table {args.table} has no events\n")
            return 2
        report = _verify_report(args.table, stored)
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
        return 0 if report["ok"] else 1
    bad: list[str] = []
    tables = store.table_ids()
    for table_id in tables:  # one line per table as it is checked, then the summary
        report = _verify_report(table_id, store.read(table_id))
        if not report["ok"]:
            bad.append(table_id)
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
        sys.stdout.flush()
    summary = {"tables": len(tables), "ok": len(tables) - len(bad), "bad": bad}
    sys.stdout.write(msgspec.json.encode(summary).decode() + "\n")
    return 0 if not bad else 1


def _verify_report(table_id: str, stored: list[StoredEvent]) -> dict[str, Any]:
    verdict = verify_events(table_id, stored)
    report: dict[str, Any] = {"table": table_id, "events": verdict.events, "hands": verdict.hands, "ok": verdict.ok}
    if verdict.finding:
        report["first_bad"] = {"version": verdict.finding.version, "problem": verdict.finding.problem}
    return report


def cmd_export(args: argparse.Namespace) -> int:
    try:
        document = export_hand(args.table, _store(args).read(args.table), args.hand,
                               in_progress=args.in_progress)
    except LookupError as error:
        sys.stderr.write(f"mighty export: {error}\n")
        return 2
    text = msgspec.json.format(msgspec.json.encode(document), indent=2).decode() + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_log(args: argparse.Namespace) -> int:
    for entry in _store(args).read(args.table):
        sys.stdout.write(describe(entry) + "\n")
    return 0


def register(sub: Any) -> None:
    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    for name, run, text in (
        ("verify", cmd_verify, "check a table's hash chain, deal commitments and replay"),
        ("export", cmd_export, "write a stored hand as a hand file"),
        ("log", cmd_log, "print a table's events readably"),
    ):
        parser = sub.add_parser(name, help=text)
        if name == "verify":
            parser.add_argument("table", nargs="?", default=None)
            parser.add_argument("--all", action="store_true", help="every table in the store, one line each")
        else:
            parser.add_argument("table")
        parser.add_argument("--redis-url", default=url, help="default: $REDIS_URL")
        if name == "export":
            parser.add_argument("--hand", type=int, default=None, help="hand number (default: last)")
            parser.add_argument("-o", "--output", default=None)
            parser.add_argument("--in-progress", action="store_true",
                                help="export a hand that has not ended (it shows every seat's cards)")
        parser.set_defaults(run=run)

"""``mighty verify``, ``mighty export``, ``mighty log``: audit a stored table.

The checks and the hand file are ``services.audit``'s; this module reads the store the
settings name and says what it found. Hands are numbered from 1 here, wherever a person
reads them (``export --hand 1`` is a table's first hand; ``log`` shows ``hand=1`` for
it); the events count them from 0 (``hand_no``).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from services.cli.common import (
    EXIT_DIFFERENT,
    EXIT_OK,
    fail,
    no_events,
    where,
    wired,
    write_json_line,
    write_line,
)
from services.settings import add_store_options
from services.store.record import BadRecord


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    verify = sub.add_parser("verify", help="check a table's hash chain, meta, feed copies, deal commitments and replay")
    verify.add_argument("table", nargs="?", default=None)
    verify.add_argument("--all", action="store_true", help="every table in the store, one line each")
    add_store_options(verify)
    verify.set_defaults(run=cmd_verify)

    export = sub.add_parser("export", help="write a stored hand as a hand file")
    export.add_argument("table")
    export.add_argument("--hand", type=int, default=None,
                        help="the hand's number, counted from 1 (default: the last hand)")
    export.add_argument("-o", "--output", default=None, help="write to this file (default: standard output)")
    export.add_argument("--in-progress", action="store_true",
                        help="export a hand that has not ended (it shows every seat's cards)")
    add_store_options(export)
    export.set_defaults(run=cmd_export)

    log = sub.add_parser("log", help="print a table's events readably (hands numbered from 1)")
    log.add_argument("table")
    add_store_options(log)
    log.set_defaults(run=cmd_log)


def cmd_verify(args: argparse.Namespace) -> int:
    if args.all == (args.table is not None):
        return fail("verify", "name one TABLE, or --all")
    wiring = wired(args)
    if not args.all:
        partition = wiring.store.partition_of(args.table)
        try:
            stored, head, feed = _still(wiring, args.table, lambda: _feeds(wiring, [partition]))
        except BadRecord as error:
            report = unreadable_report(args.table, error)
        else:
            if not stored and head.version == 0:
                return fail("verify", no_events(wiring, args.table))
            report = verify_report(args.table, stored, head, feed.get(args.table, []))
        write_json_line(report)
        return EXIT_OK if report["ok"] else EXIT_DIFFERENT
    bad: list[str] = []
    tables = wiring.store.table_ids()
    feeds = _feeds(wiring, range(wiring.space.partitions))
    for table_id in tables:  # one line per table as it is checked, then the summary
        try:
            stored, head, _ = _still(wiring, table_id, dict)
        except BadRecord as error:
            feeds.pop(table_id, None)
            report = unreadable_report(table_id, error)
        else:
            report = verify_report(table_id, stored, head, feeds.pop(table_id, []))
        if not report["ok"]:
            bad.append(table_id)
        write_json_line(report)
        sys.stdout.flush()
    for table_id, entries in sorted(feeds.items()):  # feed entries of a table that has no stream
        write_json_line({"table": table_id, "events": 0, "hands": 0, "ok": False, "first_bad": {
            "version": entries[0].version,
            "problem": f"feed entry {entries[0].id} is of a table that has no stream: it was forged"}})
        bad.append(table_id)
    write_json_line({"tables": len(tables), "ok": len(set(tables) - set(bad)), "bad": bad})
    if not tables:
        return fail("verify", f"no tables {where(wiring)}: nothing was verified")
    return EXIT_OK if not bad else EXIT_DIFFERENT


def _still(wiring: Any, table_id: str, read_feeds: Callable[[], dict[str, list[Any]]],
           attempts: int = 5) -> tuple[list[Any], Any, dict[str, list[Any]]]:
    """The table's stream, its meta and the feeds, read while the table stood still: the
    meta read before and after the stream (so a table being played is not mistaken for one
    whose meta and stream disagree), the feed before the stream (so every genuine entry is
    in the stream read after it)."""
    for _ in range(attempts):
        before = wiring.store.head(table_id)
        feeds = read_feeds()
        stored = wiring.store.read(table_id)
        head = wiring.store.head(table_id)
        if head == before:
            break
    return stored, head, feeds


def _feeds(wiring: Any, partitions: Iterable[int]) -> dict[str, list[Any]]:
    """The entries the partitions' feeds hold now, per table (read before the streams, so
    every genuine entry is in its stream when that is read)."""
    from services.audit.feed import by_table, partition_feed

    tables: dict[str, list[Any]] = {}
    for partition in partitions:
        found, _ = by_table(partition_feed(wiring.client, wiring.space, partition))
        tables.update(found)
    return tables


def unreadable_report(table_id: str, error: BadRecord) -> dict[str, Any]:
    """The report on a table whose stream holds an entry this release cannot read (a
    record with a flag it does not know, or cut short): named by its version."""
    return {"table": table_id, "events": error.version - 1, "hands": 0, "ok": False,  # events: those before it
            "first_bad": {"version": error.version, "problem": error.problem_text}}


def verify_report(table_id: str, stored: list[Any], head: Any = None, feed: Any = None) -> dict[str, Any]:
    from services.audit import verify_events

    verdict = verify_events(table_id, stored, head, feed)
    report: dict[str, Any] = {"table": table_id, "events": verdict.events, "hands": verdict.hands, "ok": verdict.ok}
    if verdict.finding:
        report["first_bad"] = {"version": verdict.finding.version, "problem": verdict.finding.problem}
    return report


def cmd_export(args: argparse.Namespace) -> int:
    from services.audit import HandInProgress, export_hand, hands_dealt

    if args.hand is not None and args.hand < 1:
        return fail("export", f"--hand counts from 1 (the table's first hand), not {args.hand}")
    wiring = wired(args)
    stored = wiring.store.read(args.table)
    if not stored:
        return fail("export", no_events(wiring, args.table))
    dealt = hands_dealt(stored)
    if not dealt:
        return fail("export", f"table {args.table} has dealt no hand yet")
    if args.hand is not None and args.hand > dealt:
        return fail("export", f"table {args.table} has dealt {dealt} hand{'s' * (dealt != 1)} "
                              f"(1..{dealt}): there is no hand {args.hand}")
    number = dealt if args.hand is None else args.hand
    try:
        document = export_hand(args.table, stored, number - 1, in_progress=args.in_progress)
    except HandInProgress:
        return fail("export", f"hand {number} of table {args.table} has not ended: its cards stay "
                              "secret until it does (--in-progress exports it anyway)")
    except LookupError as error:
        return fail("export", str(error))
    text = msgspec.json.format(msgspec.json.encode(document), indent=2).decode() + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


_HAND_NO = re.compile(r"(?<= )hand_no=(\d+)(?= |$)")


def cmd_log(args: argparse.Namespace) -> int:
    from services.audit import describe

    wiring = wired(args)
    stored = wiring.store.read(args.table)
    if not stored:
        return fail("log", no_events(wiring, args.table))
    for entry in stored:
        write_line(person_numbered(describe(entry)))
    return EXIT_OK


def person_numbered(line: str) -> str:
    """``describe``'s line with the hand counted from 1 (``hand_no=0`` -> ``hand=1``)."""
    return _HAND_NO.sub(lambda m: f"hand={int(m.group(1)) + 1}", line)

"""``mighty projections rebuild|check|lag|ledger|lobby``: the stored projections.

Each reads the store the settings name (``--redis-url``/``REDIS_URL``, ``--namespace``/
``MIGHTY_NAMESPACE``); without a URL there is nothing to read, so it says so and stops.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from projections import KINDS
from projections.docs import as_text
from services.bootstrap import Wiring
from services.cli.common import EXIT_DIFFERENT, EXIT_OK, fail, wired, write_json_line
from services.projection.store import ProjectionStore
from services.settings import add_store_options


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    projections = sub.add_parser("projections", help="rebuild, check and read the projections")
    what = projections.add_subparsers(dest="action", required=True)
    for name, run, text in (
        ("rebuild", cmd_rebuild, "recompute from the streams and store the result"),
        ("check", cmd_check, "compare what is stored with a rebuild, byte for byte (exit 1 if different)"),
        ("lag", cmd_lag, "how far each kind is behind its feeds: one line per kind, one per partition behind"),
    ):
        action = what.add_parser(name, help=text)
        action.add_argument("kind", nargs="?", choices=KINDS, help="one kind (default: all)")
        if name == "lag":
            action.add_argument("--partitions-detail", dest="detail", action="store_true",
                                help="also one line for every partition, behind or not")
        add_store_options(action)
        action.set_defaults(run=run)
    dead = what.add_parser("dead-letters", help="list the feed entries a kind passed over")
    dead.add_argument("--kind", choices=KINDS, default=None, help="one kind (default: all)")
    add_store_options(dead)
    dead.set_defaults(run=cmd_dead_letters)
    for name, run, text in (
        ("ledger", cmd_ledger, "print every player's ledger over all tables"),
        ("lobby", cmd_lobby, "print the lobby directory"),
    ):
        action = what.add_parser(name, help=text)
        add_store_options(action)
        action.set_defaults(run=run)


RATINGS = "ratings"


def _kinds(args: argparse.Namespace) -> list[str]:
    return [args.kind] if args.kind else list(KINDS)


def _each_partition(wiring: Wiring, kinds: list[str],
                    action: Callable[[ProjectionStore, int], object]) -> list[object]:
    results: list[object] = []
    for kind in kinds:
        store = wiring.projection_store(kind)
        results.extend(action(store, p) for p in range(wiring.space.partitions))
    return results


def cmd_rebuild(args: argparse.Namespace) -> int:
    from services.projection.rebuild import rebuild

    wiring = wired(args)  # its store reads archived tables from PostgreSQL (the ledger folds them)
    forged = _forged(wiring)
    if forged:
        return fail("projections rebuild", f"{len(forged)} feed entr{'y' if len(forged) == 1 else 'ies'} "
                    "are not their table's stored events (listed above): nothing was rebuilt. Remove "
                    "them (XDEL) or restore the streams they contradict, then rebuild", EXIT_DIFFERENT)
    done = _each_partition(wiring, _kinds(args), lambda store, p: rebuild(store, p, events=wiring.store))
    rated = None
    if RATINGS in _kinds(args):  # then the ratings over every partition, from nothing (docs/ratings.md)
        from services.projection.rater import rebuild_ratings

        rated = rebuild_ratings(wiring.client, wiring.space, events=wiring.store)  # archived tables' hands too
    write_json_line({"kinds": _kinds(args), "partitions": len(done),
                     "entries": sum(getattr(c, "count", 0) for c in done),
                     **({} if rated is None else {"hands_rated": rated})})
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    from services.projection.rebuild import check

    wiring = wired(args)
    forged = _forged(wiring)
    found = [d for differences in _each_partition(wiring, _kinds(args),
                                                  lambda store, p: check(store, p, events=wiring.store))
             for d in differences]  # type: ignore[attr-defined]
    for difference in found:
        write_json_line({"partition": difference.partition, "doc": list(difference.doc),
                         "stored": _text(difference.stored), "rebuilt": _text(difference.rebuilt)})
    rated: list[str] = []
    if RATINGS in _kinds(args):  # the ratings over every partition, from the partitions' hands
        from services.projection.rater import check_ratings

        rated = check_ratings(wiring.client, wiring.space, events=wiring.store)
        for key in rated:
            write_json_line({"ratings": key})
    write_json_line({"identical": not found and not forged and not rated, "differences": len(found) + len(rated),
                     "forged_feed_entries": len(forged)})
    return EXIT_OK if not found and not forged and not rated else EXIT_DIFFERENT


def _forged(wiring: Wiring) -> list[object]:
    """Every partition's feed entries that are not their table's stored events, one line
    each (the table streams are the truth the projections are checked and rebuilt from)."""
    from services.projection.rebuild import forged_entries

    store = wiring.projection_store(KINDS[0])  # the feed and the streams are every kind's
    forged: list[object] = []
    for partition in range(wiring.space.partitions):
        for finding in forged_entries(store, partition, events=wiring.store):
            write_json_line({"partition": partition, "forged_feed_entry": finding.feed_id,
                             "table": finding.table_id, "version": finding.version,
                             "problem": finding.problem})
            forged.append(finding)
    return forged


def _text(data: bytes | None) -> str | None:
    """A document as JSON text (stored as MessagePack: projections/docs.py)."""
    return None if data is None else as_text(data)


def cmd_lag(args: argparse.Namespace) -> int:
    """Per kind: how many partitions are behind, by how many entries in all, the oldest
    unapplied entry's age and the dead letters; then the partitions behind or holding dead
    letters (every one with the flag)."""
    wiring = wired(args)
    for kind in _kinds(args):
        rows = wiring.readers.lag(kind)
        behind = [row for row in rows if row.entries]
        write_json_line({"kind": kind, "partitions": len(rows), "behind": len(behind),
                         "entries": sum(row.entries for row in behind),
                         "ms": max((row.ms for row in behind), default=0),
                         "dead_letters": sum(row.dead_letters for row in rows)})
        for row in rows if args.detail else [r for r in rows if r.entries or r.dead_letters]:
            write_json_line(row)
    return EXIT_OK


def cmd_dead_letters(args: argparse.Namespace) -> int:
    wiring = wired(args)
    for kind in _kinds_of(args):
        store = wiring.projection_store(kind)
        for partition in range(wiring.space.partitions):
            for dead in store.dead_letters(partition):
                write_json_line({"kind": dead.kind, "partition": partition, "feed_id": dead.feed_id,
                                 "table": dead.table_id, "version": dead.version, "reason": dead.reason})
    return EXIT_OK


def _kinds_of(args: argparse.Namespace) -> list[str]:
    return [args.kind] if args.kind else list(KINDS)


def cmd_ledger(args: argparse.Namespace) -> int:
    write_json_line(wired(args).readers.player_ledgers())
    return EXIT_OK


def cmd_lobby(args: argparse.Namespace) -> int:
    write_json_line(wired(args).readers.lobby())
    return EXIT_OK

"""Processes read from ``/proc`` (Linux): a process's children and its command line. The
benchmarks find the processes a run started with them (``bench.native``), and so do the
tests (``tests/processes.py``)."""

from __future__ import annotations

from pathlib import Path


def children_of(pid: int) -> list[int]:
    """The child processes of ``pid``, every thread's; none once it has gone."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except FileNotFoundError:
        return found
    for task in tasks:
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except FileNotFoundError:  # the thread ended meanwhile
            continue
    return found


def command_of(pid: int) -> str:
    """The command line of ``pid``, its arguments joined by spaces ("" once it has gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except FileNotFoundError:
        return ""


def descendants_of(pid: int) -> list[int]:
    """Every process under ``pid``: its children, theirs, and so on."""
    found: list[int] = []
    frontier = children_of(pid)
    while frontier:
        found += frontier
        frontier = [child for parent in frontier for child in children_of(parent)]
    return found

"""The processes a test started, read from ``/proc`` (Linux): a process's children, its
command line, whether it is still alive (a zombie is not)."""

from __future__ import annotations

from pathlib import Path


def children_of(pid: int) -> list[int]:
    """The child processes of ``pid``, every thread's; none once it has gone."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
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


def alive(pid: int) -> bool:
    """``pid`` runs (a zombie, ended but not yet waited for, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"

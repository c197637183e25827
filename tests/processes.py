"""The processes a test started, read from ``/proc`` (Linux): a process's children and its
command line (``bench/_processes.py``, which the benchmarks share), whether it is still
alive (a zombie is not)."""

from __future__ import annotations

from pathlib import Path

from bench._processes import children_of, command_of

__all__ = ["alive", "children_of", "command_of"]


def alive(pid: int) -> bool:
    """``pid`` runs (a zombie, ended but not yet waited for, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"

"""What a projection worker says about its progress, and when (docs/workers.md, "Logs").

A worker measures how far each of its partitions is behind about once a second (the
stats it keeps in Redis, ``Worker.report``). Saying so once a second would be a line a
second per worker, each "0 behind" on a quiet service, so the log says only what is
worth reading:

- ``LagLog``: ``lag`` when some partition is at least ``BEHIND_MS`` behind (the age of
  its oldest entry not yet applied), again at most every ``REPEAT_S`` while it stays
  behind, and one ``caught up`` once no partition is;
- ``Summary``: ``applied``, the entries applied since the last summary, every
  ``MIGHTY_SUMMARY_S`` (60 s) and only when something was applied.

Both are given the time (monotonic seconds) by their caller: no clock here, so the
policy is tested by stepping a number (tests/unit/test_lag_log.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

BEHIND_MS: Final = 1000  # a partition this far behind (or further) is reported
REPEAT_S: Final = 10.0  # while behind, at most one line this often
SUMMARY_S: Final = 60.0  # the default of MIGHTY_SUMMARY_S


@dataclass(frozen=True)
class Behind:
    """Some partitions are behind: which (at least ``BEHIND_MS``), the entries not yet
    applied on all owned partitions, and the oldest one's age."""

    partitions: tuple[int, ...]
    entries: int
    ms: int
    behind_s: float  # since when the worker has been behind


@dataclass(frozen=True)
class CaughtUp:
    """No partition is behind any more, after ``behind_s`` seconds of being behind."""

    behind_s: float


@dataclass
class LagLog:
    """When to log the lag: give it each measure (``observe``); it answers what to say,
    or None."""

    behind_ms: int = BEHIND_MS
    repeat_s: float = REPEAT_S
    _since: float | None = None  # when it was first seen behind, while behind
    _said_at: float | None = None  # when it last said so

    @property
    def behind(self) -> bool:
        return self._since is not None

    def observe(self, now: float, behind: Mapping[int, tuple[int, int]]) -> Behind | CaughtUp | None:
        """``behind``: per partition, (entries, ms) not yet applied, measured at ``now``."""
        late = sorted(partition for partition, (_, ms) in behind.items() if ms >= self.behind_ms)
        if late:
            if self._since is None:
                self._since = now
            if self._said_at is not None and now - self._said_at < self.repeat_s:
                return None
            self._said_at = now
            return Behind(tuple(late), sum(entries for entries, _ in behind.values()),
                          max(ms for _, ms in behind.values()), round(now - self._since, 3))
        if self._since is None:
            return None
        caught_up = CaughtUp(round(now - self._since, 3))
        self._since = self._said_at = None
        return caught_up


@dataclass
class Summary:
    """A count summarised every ``every_s``, only when it grew: give it the running total
    (``observe``); it answers how much it grew since the last summary, or None (not time
    yet, or nothing new)."""

    every_s: float = SUMMARY_S
    _due_at: float | None = None
    _said: int = 0  # the total at the last summary

    def observe(self, now: float, total: int) -> int | None:
        if self._due_at is None:  # the first measure starts the first period (counted from 0)
            self._due_at = now + self.every_s
            return None
        if now < self._due_at:
            return None
        self._due_at = now + self.every_s
        grown, self._said = total - self._said, total
        return grown or None

"""Helpers for tests that race threads against a real Redis."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def run_writers(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Start ``count`` threads at once (a barrier); return what each returned or raised."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        except BaseException as error:  # noqa: BLE001 - handed to the test to judge
            results[i] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a writer hung"
    return results

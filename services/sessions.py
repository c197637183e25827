"""Child processes only their parent stops (``mighty serve``'s parts and its redis-server).

A Ctrl-C in a terminal sends SIGINT to the whole foreground process group: to ``mighty
serve`` and, were they in its group, to every child at once, Redis included, which
would then stop before the workers that write to it. ``own_session()`` gives
``subprocess.Popen`` what makes a child leave that group: its own session
(``start_new_session``: no controlling terminal either, so a closed terminal's SIGHUP
and a terminal's job-control signals reach the parent alone), so the parent alone
decides the order things stop in.

A child out of the parent's group would outlive a parent that dies without stopping it
(SIGKILL, a crash): on Linux each child also asks the kernel for SIGTERM when its parent
dies (``PR_SET_PDEATHSIG``), and stops as on any SIGTERM (a worker leaves its partitions,
the gateway closes its sockets, redis-server writes its AOF). Elsewhere such a child is
left running (docs/operations.md, "Stopping").
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, Final

_PR_SET_PDEATHSIG: Final = 1  # <linux/prctl.h>


def _die_with(parent: int) -> Callable[[], None] | None:
    """What the child runs between fork and exec: SIGTERM to it when its parent dies (it
    does not start when the parent is already gone). None off Linux. The kernel watches
    the thread that started the child: ``mighty serve`` starts every child from its main
    thread, which lives as long as the process."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork, not in the child

    def in_the_child() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request: nobody would stop it
            os._exit(1)

    return in_the_child


def own_session() -> dict[str, Any]:
    """``Popen`` keyword arguments: the child in a session of its own, sent SIGTERM (on
    Linux) when this process dies."""
    options: dict[str, Any] = {"start_new_session": True}
    die_with = _die_with(os.getpid())
    if die_with is not None:
        options["preexec_fn"] = die_with
    return options

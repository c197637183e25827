"""Commands packed for the wire by hiredis's C packer, in one call.

redis-py packs each command through a Python loop over its arguments (an ``isinstance``
and an encoder call each, then hiredis): 34 µs for the views worker's apply script with
its 37 arguments, against 5 µs for ``hiredis.pack_command`` on the same tuple
(docs/performance.md, "commands packed in one call"). ``FastPacker`` hands hiredis the
arguments as they are and keeps redis-py's packer for everything hiredis does not take
(a ``bool`` or ``None``, which redis-py refuses with its own error; a ``bytearray``) and
for a command name of several words (``"XINFO STREAM"``, which redis-py splits). What
goes on the wire is the same: text as UTF-8 (the clients' only encoding), numbers as
their ``repr``.
"""

from __future__ import annotations

from typing import Any

import hiredis
import redis.utils


class FastPacker:
    """A connection's command packer: hiredis's C packer first, ``fallback`` (the
    connection's own) for what it does not take."""

    __slots__ = ("_fallback",)

    def __init__(self, fallback: Any) -> None:
        self._fallback = fallback

    def pack(self, *args: Any) -> list[bytes]:
        head = args[0]
        if (isinstance(head, str) and " " not in head) or (isinstance(head, bytes) and b" " not in head):
            try:
                return [hiredis.pack_command(args)]
            except TypeError:  # an argument hiredis does not take: redis-py's way (or its error)
                pass
        packed: list[bytes] = self._fallback.pack(*args)
        return packed


def packing_fast(connection_class: type[Any]) -> type[Any]:
    """``connection_class`` (sync or asyncio) whose connections pack with ``FastPacker``
    over the packer redis-py gave them; itself when hiredis is not there."""
    if redis.utils.HIREDIS_AVAILABLE is False:
        return connection_class

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        connection_class.__init__(self, *args, **kwargs)
        if self._command_packer is not None:
            self._command_packer = FastPacker(self._command_packer)

    return type(f"Fast{connection_class.__name__}", (connection_class,), {"__init__": __init__})

"""A redis-py connection's replies read straight from its hiredis reader.

``connection.read_response`` costs ~2 µs of Python per reply on top of hiredis's parse (a
deprecation-checking wrapper, a timeout branch, the host's name formatted for an error
that rarely comes, two more coroutines). The two readers that take many replies a
command read them here instead: the async store's appends (a pipeline's replies back to
back) and the gateway's Pub/Sub link (every view published to its sockets' seats). A
reply already read from the socket is one C call, and one coroutine reads more when it
is not.

What ``read_response`` does besides is kept: an error reply comes back as its exception
(redis-py's own classes, ``NoScriptError`` included: the reader is redis-py's), a socket
error becomes ``redis.ConnectionError`` (which the callers' retries and reconnects catch).
A redis-py without these internals, or a connection without hiredis or reading its
replies another way (fakeredis) is read through ``read_response`` (``of`` says None).
"""

from __future__ import annotations

from typing import Any

import redis
import redis.asyncio as aioredis
from redis._parsers import hiredis as _hiredis_parser


class HiredisReplies:
    """``gets()``: the next reply read, or ``not_enough_data``; then ``read_more()``."""

    __slots__ = ("gets", "_parser", "_reader", "_read", "not_enough_data")

    def __init__(self, parser: Any, reader: Any, not_enough_data: object) -> None:
        self.gets = reader.gets
        self._parser = parser
        self._reader = reader
        self._read = parser.read_from_socket
        self.not_enough_data = not_enough_data

    @classmethod
    def of(cls, connection: Any) -> HiredisReplies | None:
        """The replies of ``connection`` as it is connected now (a reconnection makes a new
        reader: ask again after one); None when they cannot be read this way."""
        parser = getattr(connection, "_parser", None)
        reader = getattr(parser, "_reader", None)
        sentinel = getattr(_hiredis_parser, "NOT_ENOUGH_DATA", None)
        if (reader is None or sentinel is None or not hasattr(reader, "gets")
                or not hasattr(parser, "read_from_socket")):
            return None
        if not isinstance(parser, _hiredis_parser._AsyncHiredisParser):
            return None
        if type(connection).read_response is not aioredis.Connection.read_response:
            return None  # its replies do not come through the parser (fakeredis's)
        return cls(parser, reader, sentinel)

    async def read_more(self) -> None:
        """Read more from the socket into the reader. A connection made again since ``of``
        (a new reader, which what is read would go to) is a lost one for this reader."""
        if self._parser._reader is not self._reader:
            raise redis.ConnectionError("The connection was made again while its replies were read.")
        try:
            await self._read()
        except OSError as error:
            raise redis.ConnectionError(f"Error while reading replies: {error}") from error

"""A WebSocket's life on the gateway (docs/gateway.md, *Sockets*): who may open one (the
quotas per client address and per player), how long a send may wait for a slow client,
how the pusher task ends with its connection, and which failures are only a client
that went away.

The quotas are counted twice: by each gateway for its own sockets, in memory
(``SocketCounts``: a flood on one gateway is turned away before any Redis call), and for
every gateway together in Redis (``SharedSockets``: a client spread over N gateways holds
no more). A socket counted in Redis is held for ``SOCKET_TTL_S`` and renewed by its
gateway while it is open, so the slots of a gateway that died run out within that time.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Final

import structlog
from litestar.exceptions import WebSocketDisconnect

from services.gateway.errors import ApiError
from services.store.errors import is_transient

if TYPE_CHECKING:
    from services.gateway.backend import Backend

log = structlog.get_logger("mighty.gateway")

# RFC 6455 close codes the stream uses
POLICY_VIOLATION: Final = 1008  # a refusal: bad token, unknown table, too many sockets
TOO_BIG: Final = 1009  # a frame over 16 KiB
TRY_AGAIN_LATER: Final = 1013  # the store is down, or the client reads too slowly: reconnect with after=
STOP_PATIENCE_S: Final = 0.1  # how long one cancellation of a pusher is given to end it
SOCKET_TTL_S: Final = 60.0  # a socket counted in Redis is held this long unless its gateway renews it


class SocketCounts:
    """The open sockets of this gateway per client address and per player, against the
    quotas (``Settings.sockets_per_address``, ``sockets_per_player``)."""

    def __init__(self, per_address: int, per_player: int) -> None:
        self.per_address = per_address
        self.per_player = per_player
        self._addresses: Counter[str] = Counter()
        self._players: Counter[str] = Counter()

    @contextlib.contextmanager
    def held(self, address: str, player: str | None) -> Iterator[Callable[[], None]]:
        """One socket of ``address`` (and of ``player``, when it has a token) while the
        block runs, or until the function it gives is called (the connection is over,
        what is left is the handler's own cleanup); ``ApiError("too_many_sockets")``
        when either quota is full."""
        if self._addresses[address] >= self.per_address:
            raise ApiError("too_many_sockets", f"This address already holds {self.per_address} open sockets; "
                           "close one before opening another.")
        if player is not None and self._players[player] >= self.per_player:
            raise ApiError("too_many_sockets", f"This player already holds {self.per_player} open sockets; "
                           "close one (another tab?) before opening another.")
        self._addresses[address] += 1
        if player is not None:
            self._players[player] += 1
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                _uncount(self._addresses, address)
                if player is not None:
                    _uncount(self._players, player)

        try:
            yield release
        finally:
            release()

    def of_address(self, address: str) -> int:
        return self._addresses[address]

    def of_player(self, player: str) -> int:
        return self._players[player]


class SharedSockets:
    """The open sockets of every gateway per client address and per player, in Redis,
    against the same quotas. ``take`` counts one (``ApiError("too_many_sockets")`` when
    either quota is full, nothing counted then), ``give_back`` uncounts it; ``keep``
    renews, for the gateway's life, what it holds."""

    def __init__(self, per_address: int, per_player: int, ttl_s: float = SOCKET_TTL_S) -> None:
        self.per_address = per_address
        self.per_player = per_player
        self.ttl_s = ttl_s
        self._held: dict[str, tuple[str, ...]] = {}  # socket id -> its owners (address, player)
        self._releases: set[asyncio.Task[None]] = set()

    async def take(self, backend: Backend, address: str, player: str | None) -> str:
        socket_id = secrets.token_hex(8)
        if not await backend.hold_socket(f"address:{address}", socket_id, self.per_address, self.ttl_s):
            raise ApiError("too_many_sockets", f"This address already holds {self.per_address} open sockets; "
                           "close one before opening another.")
        owners: tuple[str, ...] = (f"address:{address}",)
        if player is not None:
            if not await backend.hold_socket(f"player:{player}", socket_id, self.per_player, self.ttl_s):
                await backend.release_socket(owners[0], socket_id)
                raise ApiError("too_many_sockets", f"This player already holds {self.per_player} open sockets; "
                               "close one (another tab?) before opening another.")
            owners += (f"player:{player}",)
        self._held[socket_id] = owners
        return socket_id

    def give_back(self, backend: Backend, socket_id: str) -> None:
        """Uncount a socket (once; in the background: a connection's end waits for no
        Redis call, and one that fails leaves a slot that runs out by itself)."""
        owners = self._held.pop(socket_id, None)
        if owners is None:
            return
        task = asyncio.get_running_loop().create_task(self._release(backend, owners, socket_id))
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    async def _release(self, backend: Backend, owners: tuple[str, ...], socket_id: str) -> None:
        for owner in owners:
            try:
                await backend.release_socket(owner, socket_id)
            except Exception as error:  # noqa: BLE001 - the slot runs out within ttl_s
                if not is_transient(error):
                    log.warning("socket_release_failed", error=str(error)[:200])
                return

    def held(self) -> int:
        return len(self._held)

    async def keep(self, backend: Backend) -> None:
        """Renew the sockets this gateway holds every third of their time, until cancelled."""
        failing = False
        while True:
            await asyncio.sleep(self.ttl_s / 3)
            by_owner: dict[str, list[str]] = {}
            for socket_id, owners in list(self._held.items()):
                for owner in owners:
                    by_owner.setdefault(owner, []).append(socket_id)
            try:
                if by_owner:
                    await backend.renew_sockets(by_owner, self.ttl_s)
                failing = False
            except Exception as error:
                if not is_transient(error):
                    raise
                if not failing:
                    log.warning("socket_renewal_failed", error=str(error)[:200], sockets=len(self._held))
                failing = True


def _uncount(counts: Counter[str], key: str) -> None:
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]  # no key stays behind for an address or a player gone


class TooSlow(Exception):
    """A send to the client did not complete within its bound: the client does not read."""


WRITABLE: Final = "mighty.writable"  # the scope extension: the connection's "not paused" event
# The scope extension: write a text frame at once, bypassing ASGI (``socket_protocol``).
WRITE_NOW: Final = "mighty.write_now"


async def send_within(socket: Any, text: str, timeout_s: float) -> None:
    """Send one frame, waiting at most ``timeout_s`` for the client to take it in
    (uvicorn stops accepting frames while the connection's write buffer is over its
    high-water mark: a client that does not read holds it there). While writing is not
    paused the send cannot wait (uvicorn's only wait is for the pause to end): no timer
    is armed then, which a push to every socket would otherwise pay for each frame."""
    writable = socket.scope.get("extensions", {}).get(WRITABLE)
    if writable is not None and writable.is_set():
        await socket.send_text(text)
        return
    try:
        async with asyncio.timeout(timeout_s):
            await socket.send_text(text)
    except TimeoutError:
        raise TooSlow(f"the client took no frame for {timeout_s:g} s") from None


class FrameSender:
    """A socket's one writer: its pushes and its answers to commands, in the order they
    are sent. A frame is written at once, straight to the connection, when the
    connection can take it without waiting (uvicorn with the gateway's protocol, writing
    not paused, no other send waiting): no ASGI message, no lock, no timer. Otherwise it
    waits its turn, then ``send_within`` the bound."""

    __slots__ = ("_socket", "_timeout_s", "_now", "_lock", "_queued")

    def __init__(self, socket: Any, timeout_s: float) -> None:
        self._socket = socket
        self._timeout_s = timeout_s
        self._now: Callable[[bytes], bool] | None = socket.scope.get("extensions", {}).get(WRITE_NOW)
        self._lock = asyncio.Lock()
        # sends holding or waiting for the lock: not ``locked()``, which is False from the
        # moment a send releases it until the next waiter has run and taken it (a frame
        # written at once then would overtake the waiter's)
        self._queued = 0

    @property
    def writes_at_once(self) -> bool:
        """Whether the connection lets frames be written at once at all (uvicorn with the
        gateway's protocol; not a test client)."""
        return self._now is not None

    def now(self, data: bytes) -> bool:
        """Write ``data`` at once if it can be (True), without waiting: no other send under
        way, the connection taking frames; False: nothing was written."""
        return self._now is not None and not self._queued and self._now(data)

    async def __call__(self, data: bytes) -> None:
        if self.now(data):
            return
        self._queued += 1
        try:
            async with self._lock:
                await send_within(self._socket, data.decode(), self._timeout_s)
        finally:
            self._queued -= 1


def is_disconnect(error: BaseException) -> bool:
    """Whether ``error`` only says that the client has gone (closed, reset, vanished):
    an ordinary end of a socket, not a failure to log."""
    from uvicorn.protocols.utils import ClientDisconnected

    if isinstance(error, RuntimeError) and _CLOSED_ALREADY in str(error):
        # a frame sent as the socket closed (the pusher, while the handler closed it for
        # a client gone or too slow): the server says so with a RuntimeError
        return True
    return isinstance(error, WebSocketDisconnect | ClientDisconnected | ConnectionError)


# What uvicorn's WebSocket protocols say of a send after the close (every implementation).
_CLOSED_ALREADY = "after sending 'websocket.close'"


async def stop(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and return once it has ended. A cancellation can be lost on its
    way: Python 3.11's ``asyncio.wait_for`` returns the result of a future that completed
    as it was cancelled, and a library may catch one; a pusher that lost its cancellation
    would wait on its channel for ever (a handler outliving its connection, the gauge and
    the subscription with it). So it is cancelled again until it has ended."""
    try:
        while not task.done():
            task.cancel()
            await asyncio.wait([task], timeout=STOP_PATIENCE_S)
    except asyncio.CancelledError:  # the handler itself is cancelled: the pusher goes too
        task.cancel()
        raise
    if not task.cancelled():
        task.exception()  # retrieved: what it raised was its own to report


def socket_protocol() -> type[asyncio.Protocol]:
    """uvicorn's WebSocket protocol (websockets, sans-I/O), with two changes:

    - a connection whose client stopped reading is aborted, not closed, when its handler
      has ended or its heartbeat timed out. ``close()`` waits for the write buffer to
      drain, which a client that does not read never lets happen: the connection, its
      buffer and its place in the gauge would stay for ever;
    - its handlers may write a text frame at once (``WRITE_NOW``, ``FrameSender``): the
      frame is written as ASGI's ``websocket.send`` writes it, without the message, the
      framework's wrappers and the await, when nothing would make that send wait or
      fail (the handshake done, no close sent, writing not paused);
    - permessage-deflate, when taken, compresses what it sends with ISA-L (``deflate``)."""
    from uvicorn.protocols.utils import ClientDisconnected
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    from websockets.exceptions import InvalidState
    from websockets.server import ServerProtocol

    from services.gateway import deflate

    class Protocol(WebSocketsSansIOProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if self.config.ws_per_message_deflate:  # uvicorn's connection, with the gateway's deflate
                self.conn = ServerProtocol(extensions=deflate.extensions(), max_size=self.config.ws_max_size,
                                           logger=self.conn.logger)

        def _abort_if_stuck(self) -> None:
            # writing paused: the buffer is over its high-water mark, the client not reading
            if self.transport is not None and not self.writable.is_set():
                self.transport.abort()

        def write_now(self, data: bytes) -> bool:
            """Write ``data`` (UTF-8 JSON) as one text frame, now; False: it must go
            through ``send`` (it would wait, or the connection is not open)."""
            if (not self.handshake_complete or self.close_sent or self.initial_response is not None
                    or self.disconnected or not self.writable.is_set() or self.transport.is_closing()):
                return False
            try:
                self.conn.send_text(data)
            except InvalidState:
                raise ClientDisconnected() from None
            self.transport.write(b"".join(self.conn.data_to_send()))
            return True

        async def run_asgi(self) -> None:
            # the handler's sends may skip their time bound while writing is not paused
            self.scope["extensions"][WRITABLE] = self.writable  # type: ignore[assignment]
            self.scope["extensions"][WRITE_NOW] = self.write_now  # type: ignore[assignment]
            await super().run_asgi()
            self._abort_if_stuck()

        def keepalive_timeout(self) -> None:
            super().keepalive_timeout()
            self._abort_if_stuck()

    return Protocol

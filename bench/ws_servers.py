"""`mighty bench ws_servers`: what a WebSocket server costs to send a seat's frames, per
server: the gateway's uvicorn path against granian and picows (docs/performance.md,
"WebSocket servers").

Each server runs alone in its own process on a free port and holds ``--sockets`` sockets
from one client process (the ``websockets`` library, as the load benchmark's client).
Asked by the client, it sends ``--rounds`` rounds, each one frame to every socket, paced
at ``--rate`` frames a second (the load benchmark at 20 tables pushes about 2,500
frames a second through each gateway), then waits for the client to say it has read
every frame. Its CPU (``time.process_time``: every thread of the process, so granian's
Rust threads count too) from the first frame to that word, over the frames sent, is the
figure: ``server_us_per_frame``.

The frames are a seat's ``view`` frames: socket ``i`` is seat ``i % 5`` of a table and
gets that seat's views of random mighty-5 hands in order (the game's ``seat_view``
under the frame's envelope), 1.15 KB on average, so a deflate sees what a seat's stream
holds.

The servers (``--servers``, in turn, ``--repeat`` times, alternating):

- ``uvicorn-deflate``: the gateway's own path: uvicorn with ``sockets.socket_protocol``,
  each frame written by its ``write_now`` (``FrameSender``'s path), permessage-deflate
  by ISA-L (``deflate``): what the gateway does today;
- ``uvicorn``: the same without permessage-deflate (``MIGHTY_WS_DEFLATE=0``);
- ``granian``: granian's ASGI server (Rust), each frame an ASGI ``websocket.send``;
  granian has no permessage-deflate;
- ``granian-rsgi``: granian's own interface (RSGI: the gateway's framework does not
  speak it), each frame a ``send_str``;
- ``picows``: picows (Cython), each frame ``WSTransport.send``, no deflate;
- ``picows-deflate``: picows with permessage-deflate done here (ISA-L at the gateway's level, the
  gateway's window), to tell the server's framing from the compressor's cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import msgspec

from services.gateway.deflate import SYNC_FLUSH_TAIL, WINDOW_BITS

SERVERS: Final = ("uvicorn-deflate", "uvicorn", "granian", "granian-rsgi", "picows", "picows-deflate")
SEATS: Final = 5
HOST: Final = "127.0.0.1"
PATH: Final = "/ws"


def seat_frames(hands: int = 3, seed: int = 1) -> list[list[bytes]]:
    """Each seat's ``view`` frames over ``hands`` random mighty-5 hands, in order: a
    frame after every command, as the gateway pushes one to each seat."""
    from domain.registry import game_named, game_of

    rng = random.Random(seed)
    variant = game_named("mighty-5")
    rules = variant.make_rules("mighty-5", {})
    game = game_of(rules)
    encode = msgspec.json.Encoder().encode
    frames: list[list[bytes]] = [[] for _ in range(SEATS)]
    version = 0
    totals = [0] * SEATS
    for hand_no in range(hands):
        deck = list(game.deck(rules))
        rng.shuffle(deck)
        state = game.evolve(None, game.deal(rules, tuple(deck), dealer=rng.randrange(SEATS), hand_no=hand_no,
                                            previous_declarer=None, commitment="", salt=""))
        while not game.is_terminal(state):
            seat = game.to_act(state)
            assert seat is not None
            command = rng.choice(list(game.legal_commands(state, seat)))
            for event in game.decide(state, command):
                state = game.evolve(state, event)
                version += 1
            for reader in range(SEATS):
                view = msgspec.to_builtins(game.seat_view(state, reader))
                view.update(table="t-bench", version=version, seat=reader, status="playing", game="mighty-5",
                            seats=[f"player {n}" for n in range(SEATS)], hand_no=hand_no + 1, totals=totals)
                frames[reader].append(b'{"type":"view","version":%d,"view":%s}' % (version, encode(view)))
    return frames


class Round:
    """The send loop every server runs: ``rounds`` rounds of one frame to every socket,
    paced at ``rate`` frames a second; the CPU from the first frame until the client's
    ``done``, over the frames sent."""

    def __init__(self) -> None:
        self.frames = seat_frames()
        self.sockets: list[Callable[[bytes], Awaitable[None] | None]] = []
        self.done = asyncio.Event()
        self._answers: set[asyncio.Task[None]] = set()

    def heard(self, text: str, reply: Callable[[str], Awaitable[None] | None]) -> None:
        """A word from the client: ``go ROUNDS RATE`` starts the rounds, whose figures
        ``reply`` sends once the client has said ``done``."""
        if text == "done":
            self.done.set()
        elif (go := _command(text)) is not None:
            self.done.clear()
            task = asyncio.get_running_loop().create_task(self._answer(go, reply))
            self._answers.add(task)
            task.add_done_callback(self._answers.discard)

    async def _answer(self, go: tuple[int, float], reply: Callable[[str], Awaitable[None] | None]) -> None:
        pending = reply(json.dumps(await self.run(*go)))
        if pending is not None:
            await pending

    async def run(self, rounds: int, rate: float) -> dict[str, Any]:
        pause = len(self.sockets) / rate
        cpu, wall = time.process_time(), time.perf_counter()
        sent = 0
        for r in range(rounds):
            began = time.perf_counter()
            for i, send in enumerate(self.sockets):
                seat = self.frames[i % SEATS]
                pending = send(seat[r % len(seat)])
                if pending is not None:
                    await pending
                sent += 1
            await asyncio.sleep(max(0.0, pause - (time.perf_counter() - began)))
        await self.done.wait()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        return {"frames": sent, "cpu_s": round(cpu, 4), "wall_s": round(wall, 3),
                "server_us_per_frame": round(cpu / sent * 1e6, 2)}


def _command(text: str) -> tuple[int, float] | None:
    parts = text.split()
    return (int(parts[1]), float(parts[2])) if len(parts) == 3 and parts[0] == "go" else None


# ------------------------------------------------------------------ ASGI (uvicorn, granian)

def asgi_app() -> Callable[..., Awaitable[None]]:
    """The ASGI app both ASGI servers run: a socket is accepted and counted; ``go R RATE``
    on one starts the rounds, ``done`` ends them, and the figures go back on it."""
    from services.gateway.sockets import WRITE_NOW

    state = Round()

    async def app(scope: dict[str, Any], receive: Callable[..., Awaitable[dict[str, Any]]],
                  send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        if scope["type"] != "websocket":
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        now = scope.get("extensions", {}).get(WRITE_NOW)

        async def by_asgi(data: bytes) -> None:
            await send({"type": "websocket.send", "text": data.decode()})

        def at_once(data: bytes) -> Awaitable[None] | None:
            # the gateway's FrameSender: at once when the connection takes it, else by ASGI
            return None if now(data) else by_asgi(data)

        state.sockets.append(at_once if now is not None else by_asgi)
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            state.heard(message.get("text") or "", lambda text: send({"type": "websocket.send", "text": text}))

    return app


def serve_uvicorn(port: int, deflate: bool) -> None:
    import uvicorn

    from services.gateway.sockets import socket_protocol

    config = uvicorn.Config(asgi_app(), host=HOST, port=port, ws=socket_protocol(), ws_per_message_deflate=deflate,
                            loop="uvloop", lifespan="off", log_level="warning", ws_ping_interval=None)
    uvicorn.Server(config).run()


def serve_granian(port: int) -> None:
    from granian import Granian
    from granian.constants import Interfaces, Loops

    Granian("bench.ws_servers:granian_app", address=HOST, port=port, interface=Interfaces.ASGI, workers=1,
            loop=Loops.uvloop, log_enabled=False, websockets=True, factory=True).serve()


def granian_app() -> Callable[..., Awaitable[None]]:
    return asgi_app()


def serve_granian_rsgi(port: int) -> None:
    from granian import Granian
    from granian.constants import Interfaces, Loops

    Granian("bench.ws_servers:rsgi_app", address=HOST, port=port, interface=Interfaces.RSGI, workers=1,
            loop=Loops.uvloop, log_enabled=False, websockets=True, factory=True).serve()


def rsgi_app() -> Any:
    """The ASGI app's behaviour in granian's RSGI: each frame a ``send_str``."""
    from granian.rsgi import WebsocketMessageType

    state = Round()

    class App:
        async def __rsgi__(self, scope: Any, protocol: Any) -> None:
            if scope.proto != "ws":
                protocol.response_empty(404, [])
                return
            transport = await protocol.accept()

            def send(data: bytes) -> Awaitable[None]:
                return transport.send_str(data.decode())  # type: ignore[no-any-return]

            state.sockets.append(send)
            while True:
                message = await transport.receive()
                if message.kind == WebsocketMessageType.close:
                    protocol.close(1000)  # RSGI's answer to the client's close
                    return
                state.heard(message.data if isinstance(message.data, str) else message.data.decode(),
                            transport.send_str)

    return App()


# ------------------------------------------------------------------ picows

def serve_picows(port: int, deflate: bool) -> None:
    import uvloop
    from isal import isal_zlib
    from picows import (
        WSFrame,
        WSListener,
        WSMsgType,
        WSTransport,
        WSUpgradeRequest,
        WSUpgradeResponse,
        WSUpgradeResponseWithListener,
        ws_create_server,
    )

    from services.gateway import deflate as gateway_deflate

    state = Round()

    class Listener(WSListener):
        def __init__(self, compress: bool) -> None:
            self.compress = compress
            self.encoder = isal_zlib.compressobj(gateway_deflate.LEVEL, isal_zlib.DEFLATED, -WINDOW_BITS,
                                                 gateway_deflate.MEM_LEVEL)
            self.decoder = isal_zlib.decompressobj(-WINDOW_BITS)
            self.transport: WSTransport | None = None

        def on_ws_connected(self, transport: WSTransport) -> None:
            self.transport = transport
            state.sockets.append(self.send)

        def send(self, data: bytes) -> None:
            assert self.transport is not None
            if self.compress:
                body = self.encoder.compress(data) + self.encoder.flush(isal_zlib.Z_SYNC_FLUSH)
                self.transport.send(WSMsgType.TEXT, body[:-len(SYNC_FLUSH_TAIL)] if body.endswith(SYNC_FLUSH_TAIL) else body, rsv1=True)
            else:
                self.transport.send(WSMsgType.TEXT, data)

        def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
            if frame.msg_type == WSMsgType.CLOSE:
                transport.send_close(frame.get_close_code(), frame.get_close_message())
                transport.disconnect()
                return
            if frame.msg_type != WSMsgType.TEXT:
                return
            payload = frame.get_payload_as_bytes()
            if frame.rsv1:
                payload = self.decoder.decompress(payload + SYNC_FLUSH_TAIL)
            state.heard(payload.decode(), lambda text: self.send(text.encode()))

    def factory(request: WSUpgradeRequest) -> Any:
        offered = "permessage-deflate" in (request.headers.get("Sec-WebSocket-Extensions") or "")
        if deflate and offered:
            response = WSUpgradeResponse.create_101_response(extra_headers={
                "Sec-WebSocket-Extensions":
                    f"permessage-deflate; server_max_window_bits={WINDOW_BITS}; client_max_window_bits={WINDOW_BITS}"})
            return WSUpgradeResponseWithListener(response, Listener(True))
        return Listener(False)

    async def main() -> None:
        server = await ws_create_server(factory, HOST, port)
        await server.serve_forever()

    uvloop.run(main())


# ------------------------------------------------------------------ the client

def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


async def drive(port: int, sockets: int, rounds: int, rate: float, deflate: bool) -> dict[str, Any]:
    """Open ``sockets`` sockets, ask for the rounds, read every frame, say ``done``, and
    give the server's figures."""
    import websockets

    uri = f"ws://{HOST}:{port}{PATH}"
    compression = "deflate" if deflate else None
    for _ in range(100):
        try:
            first = await websockets.connect(uri, compression=compression, max_size=2**20, close_timeout=1)
            break
        except OSError:
            await asyncio.sleep(0.1)
    else:
        raise RuntimeError(f"nothing answers on port {port}")
    conns = [first] + [await websockets.connect(uri, compression=compression, max_size=2**20, close_timeout=1)
                       for _ in range(sockets - 1)]
    await asyncio.sleep(0.2)  # every socket counted by the server
    negotiated = first.response.headers.get("Sec-WebSocket-Extensions") if first.response else None
    frames = seat_frames()
    read_bytes, wrong = [0], [0]

    async def read(i: int, conn: Any) -> None:
        seat = frames[i % SEATS]
        for r in range(rounds):
            frame = await conn.recv(decode=False)  # inflated, when deflated
            read_bytes[0] += len(frame)
            wrong[0] += frame != seat[r % len(seat)]

    readers = [asyncio.create_task(read(i, c)) for i, c in enumerate(conns)]
    await first.send(f"go {rounds} {rate}")
    await asyncio.gather(*readers)
    await first.send("done")
    result: dict[str, Any] = json.loads(await first.recv())
    await asyncio.gather(*(conn.close() for conn in conns))
    result["deflate"] = negotiated
    result["payload_bytes"] = round(read_bytes[0] / (rounds * sockets))
    result["frames_not_as_sent"] = wrong[0]  # every frame read is checked against what was sent
    return result


def run_one(server: str, sockets: int, rounds: int, rate: float) -> dict[str, Any]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "bench.ws_servers", "--serve", server, "--port", str(port)],
                               env={**os.environ, "PYTHONHASHSEED": "0"})
    try:
        result = asyncio.run(drive(port, sockets, rounds, rate, deflate=server.endswith("deflate")))
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
    return {"server": server, "sockets": sockets, **result}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench ws_servers")
    parser.add_argument("--servers", default=",".join(SERVERS), help="comma-separated, of: " + ", ".join(SERVERS))
    parser.add_argument("--sockets", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--rate", type=float, default=2500.0, help="frames a second, all sockets together")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    parser.add_argument("--serve", choices=SERVERS, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        if args.serve.startswith("uvicorn"):
            serve_uvicorn(args.port, args.serve.endswith("deflate"))
        elif args.serve == "granian":
            serve_granian(args.port)
        elif args.serve == "granian-rsgi":
            serve_granian_rsgi(args.port)
        else:
            serve_picows(args.port, args.serve.endswith("deflate"))
        return 0
    servers = [s for s in args.servers.split(",") if s]
    unknown = set(servers) - set(SERVERS)
    if unknown:
        parser.error(f"unknown servers: {', '.join(sorted(unknown))}")
    runs = [run_one(server, args.sockets, args.rounds, args.rate) for _ in range(args.repeat) for server in servers]
    medians = {server: statistics.median(r["server_us_per_frame"] for r in runs if r["server"] == server)
               for server in servers}
    print(json.dumps({"bench": "ws_servers", "sockets": args.sockets, "rounds": args.rounds, "rate": args.rate,
                      "median_us_per_frame": medians, "runs": runs, "python": platform.python_version()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

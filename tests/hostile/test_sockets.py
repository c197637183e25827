"""Sockets as a stranger holds them (issue 19, items 3 and 6): no handler outlives its
connection whatever the close pattern, the open-sockets gauge equals the connections,
silent sockets are closed by the heartbeat, sockets are counted per address and per
player, a SIGTERM ends the gateway within its grace period with sockets open, and no
token (nor a traceback for an ordinary disconnect) reaches any part's log."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from bench.soak import established_connections
from services.projection.notify import channel_of
from tests.hostile.conftest import Running

pytestmark = pytest.mark.timeout(180)


# ---------------------------------------------------------------- helpers


def wait_for(condition: Callable[[], bool], timeout_s: float = 15.0, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not hold within {timeout_s} s"
        time.sleep(0.05)


def gauge(running: Running, name: str = "gateway") -> float:
    text = httpx.get(running.service.base(name) + "/metrics", timeout=5).text
    for line in text.splitlines():
        if line.startswith("mighty_open_sockets "):
            return float(line.split()[1])
    raise AssertionError("no mighty_open_sockets in /metrics")


def port(running: Running, name: str = "gateway") -> int:
    return running.service.ports[name]


def gauge_is_connections(running: Running, name: str = "gateway") -> bool:
    return gauge(running, name) == established_connections(port(running, name))


def player(running: Running, name: str = "Sock") -> tuple[str, str]:
    made = httpx.post(running.base + "/api/v1/players", json={"name": name}, timeout=10)
    assert made.status_code == 201, made.text
    return made.json()["player"], made.json()["token"]


def bot_table(running: Running, token: str, hands: int) -> str:
    made = httpx.post(running.base + "/api/v1/tables", timeout=10, headers={"Authorization": f"Bearer {token}"},
                      json={"game": "mighty-5", "seat": None, "hands": hands,
                            "bots": {str(seat): "beginner" for seat in range(5)}})
    assert made.status_code == 201, made.text
    table: str = made.json()["table"]
    return table


def status(running: Running, table: str) -> str:
    found: str = httpx.get(f"{running.base}/api/v1/tables/{table}", timeout=10).json()["status"]
    return found


def subscribers(running: Running, table: str, reader: str = "spectator") -> int:
    client = redis.Redis.from_url(running.redis.url)
    try:
        channel = channel_of(running.service.space, table, reader)
        reply: Any = client.execute_command("PUBSUB", "SHARDNUMSUB", channel)
        return int(reply[1])
    finally:
        client.close()


def stream_url(running: Running, table: str, after: int = 0, token: str | None = None, name: str = "gateway") -> str:
    base = running.service.base(name).replace("http://", "ws://", 1)
    return f"{base}/api/v1/tables/{table}/stream?after={after}" + (f"&token={token}" if token else "")


def drop(ws: ClientConnection) -> None:
    """Close the TCP connection with no close frame (a client that vanished)."""
    with contextlib.suppress(OSError):
        ws.socket.shutdown(socket.SHUT_RDWR)
    ws.socket.close()
    with contextlib.suppress(Exception):
        ws.close_socket()


def raw_stream(gateway_port: int, path: str) -> socket.socket:
    """A WebSocket opened by hand, that will never answer a ping nor send a frame."""
    sock = socket.create_connection(("127.0.0.1", gateway_port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{gateway_port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, "the gateway closed the connection during the handshake"
        head += chunk
    assert head.startswith(b"HTTP/1.1 101"), head[:200]
    return sock


def closed_by_server(sock: socket.socket, within_s: float) -> bool:
    """Read (and ignore) what the server sends until it closes the connection."""
    deadline = time.monotonic() + within_s
    sock.settimeout(0.2)
    while time.monotonic() < deadline:
        try:
            if sock.recv(65536) == b"":
                return True
        except TimeoutError:
            continue
        except ConnectionResetError:
            return True
    return False


def pong(ws: ClientConnection) -> dict[str, object]:
    """The answer to a ping, past the views the server pushes first (a cursor beyond the
    table gets its current view marked ``rollback``: docs/api.md, the stream)."""
    while True:
        frame: dict[str, object] = json.loads(ws.recv(timeout=10))
        if frame.get("type") != "view":
            return frame


def log_lines(running: Running) -> Iterator[tuple[str, str]]:
    for path in sorted(Path(running.service.directory).glob("*.log")):
        for line in path.read_text(errors="replace").splitlines():
            yield path.name, line


def gateway_lines(running: Running) -> list[str]:
    return [line for name, line in log_lines(running) if name == "gateway.log"]


@pytest.fixture(scope="module")
def finished(service: Running) -> tuple[str, str]:
    """A finished table of bots, and a player's token (not seated there)."""
    _, token = player(service)
    table = bot_table(service, token, hands=1)
    wait_for(lambda: status(service, table) == "finished", 120, "the bots finishing their table")
    return table, token


# ---------------------------------------------------------------- no handler outlives its connection


def test_ping_pong_close_on_a_finished_table_leaves_no_handler_no_gauge_and_no_subscription(
    service: Running, finished: tuple[str, str],
) -> None:
    """The review's leak: connect after the last version, ping, read the pong, close; 400
    times took the gauge to 84 with no connection left and kept the channel subscribed."""
    table, token = finished
    for _ in range(100):
        with connect(stream_url(service, table, after=100_000, token=token)) as ws:
            ws.send('{"type":"ping"}')
            assert pong(ws) == {"type": "pong"}
    wait_for(lambda: gauge(service) == 0, what="the open-sockets gauge back at 0")
    assert established_connections(port(service)) == 0
    wait_for(lambda: subscribers(service, table) == 0, what="the view channel unsubscribed")
    assert httpx.get(service.base + "/healthz", timeout=5).status_code == 200


def _close_with_frame_mid_push(ws: ClientConnection) -> None:
    ws.recv(timeout=10)  # a view: more are on their way while the bots play
    ws.close()


def _vanish_mid_push(ws: ClientConnection) -> None:
    ws.recv(timeout=10)
    drop(ws)


def _vanish_at_once(ws: ClientConnection) -> None:
    drop(ws)


def _frame_over_16_kib(ws: ClientConnection) -> None:
    with contextlib.suppress(ConnectionClosed):
        ws.send("x" * (17 * 1024))
        while True:
            ws.recv(timeout=10)


def _not_json_then_vanish(ws: ClientConnection) -> None:
    ws.send(b"\xff\xfe binary, not a JSON object")
    with contextlib.suppress(ConnectionClosed, TimeoutError):
        while json.loads(ws.recv(timeout=10)).get("type") != "refused":
            pass
    drop(ws)


@pytest.mark.parametrize("pattern", [_close_with_frame_mid_push, _vanish_mid_push, _vanish_at_once,
                                     _frame_over_16_kib, _not_json_then_vanish],
                         ids=lambda pattern: pattern.__name__.strip("_"))
def test_no_handler_outlives_its_connection_whatever_the_close_pattern(
    service: Running, pattern: Callable[[ClientConnection], None],
) -> None:
    _, token = player(service)
    table = bot_table(service, token, hands=2)  # played by the bots while the clients come and go
    for _ in range(15):
        ws = connect(stream_url(service, table, token=token))
        try:
            pattern(ws)
        finally:
            with contextlib.suppress(Exception):
                ws.close()
    wait_for(lambda: gauge(service) == 0, what="the open-sockets gauge back at 0")
    wait_for(lambda: established_connections(port(service)) == 0, what="no connection left")
    wait_for(lambda: subscribers(service, table) == 0, what="the view channel unsubscribed")


def test_the_open_sockets_gauge_counts_the_connections_that_are_open(service: Running,
                                                                     finished: tuple[str, str]) -> None:
    table, token = finished
    sockets = [connect(stream_url(service, table, after=100_000, token=token if i % 2 else None))
               for i in range(6)]
    try:
        for ws in sockets:  # each handler is past its checks once it answers
            ws.send('{"type":"ping"}')
            assert pong(ws) == {"type": "pong"}
        assert gauge(service) == 6 == established_connections(port(service))
    finally:
        for ws in sockets:
            ws.close()
    wait_for(lambda: gauge(service) == 0 == established_connections(port(service)),
             what="the gauge and the connections both back at 0")


# ---------------------------------------------------------------- heartbeat


def test_a_socket_that_answers_no_ping_is_closed_and_leaves_nothing_behind(
    stranger_service: Callable[..., Running],
) -> None:
    running = stranger_service(ws_ping_interval_s=0.5, ws_ping_timeout_s=0.5)
    _, token = player(running)
    table = bot_table(running, token, hands=1)
    silent = raw_stream(port(running), f"/api/v1/tables/{table}/stream?after=100000")
    try:
        wait_for(lambda: gauge(running) == 1, what="the silent socket counted")
        assert closed_by_server(silent, within_s=10), "the gateway kept a socket that answered no ping"
    finally:
        silent.close()
    wait_for(lambda: gauge(running) == 0, what="the open-sockets gauge back at 0")
    wait_for(lambda: subscribers(running, table) == 0, what="the view channel unsubscribed")


# ---------------------------------------------------------------- compression


def test_permessage_deflate_is_taken_unless_the_gateway_is_set_to_decline_it(
    service: Running, finished: tuple[str, str], stranger_service: Callable[..., Running],
) -> None:
    """On by default (MIGHTY_WS_DEFLATE; docs/gateway.md, Sockets); switched off, a client
    that offers it is answered without it, and gets its views all the same."""
    table, _ = finished
    with connect(stream_url(service, table), compression="deflate") as ws:
        assert ws.response is not None
        assert ws.response.headers["Sec-WebSocket-Extensions"].startswith("permessage-deflate")
        assert json.loads(ws.recv(timeout=10))["type"] == "view"
    running = stranger_service(ws_deflate=False)
    _, token = player(running)
    table = bot_table(running, token, hands=1)
    with connect(stream_url(running, table), compression="deflate") as ws:
        assert ws.response is not None and "Sec-WebSocket-Extensions" not in ws.response.headers
        assert json.loads(ws.recv(timeout=10))["type"] == "view"


# ---------------------------------------------------------------- quotas


def _refusal(ws: ClientConnection) -> tuple[dict[str, Any], int | None]:
    first = json.loads(ws.recv(timeout=10))
    with contextlib.suppress(ConnectionClosed):
        ws.recv(timeout=10)
    return first, ws.close_code


def test_sockets_are_counted_per_player_and_per_address_and_refused_with_1008(
    stranger_service: Callable[..., Running],
) -> None:
    running = stranger_service(sockets_per_address=3, sockets_per_player=2)
    _, token = player(running)
    table = bot_table(running, token, hands=1)
    wait_for(lambda: status(running, table) == "finished", 120, "the bots finishing their table")
    url = stream_url(running, table, after=100_000, token=token)
    held = [connect(url), connect(url)]
    try:
        for ws in held:  # each is counted once its handler answers (past its checks)
            ws.send('{"type":"ping"}')
            assert pong(ws) == {"type": "pong"}
        with connect(url) as third:
            refused, code = _refusal(third)
        assert refused["type"] == "error" and refused["code"] == "too_many_sockets", refused
        assert refused["message"]
        assert code == 1008
        held.append(connect(stream_url(running, table, after=100_000)))  # a spectator: the address's third
        held[-1].send('{"type":"ping"}')
        assert pong(held[-1]) == {"type": "pong"}
        with connect(stream_url(running, table, after=100_000)) as fourth:
            refused, code = _refusal(fourth)
        assert (refused["code"], code) == ("too_many_sockets", 1008)
        held.pop(0).close()  # a slot is free again once a socket closes
        wait_for(lambda: gauge(running) == 2, what="the closed socket uncounted")
        with connect(url) as again:
            again.send('{"type":"ping"}')
            assert pong(again) == {"type": "pong"}
    finally:
        for ws in held:
            ws.close()


# ---------------------------------------------------------------- shutdown


def test_sigterm_ends_a_gateway_within_its_grace_period_with_sockets_open(
    stranger_service: Callable[..., Running],
) -> None:
    running = stranger_service(graceful_shutdown_s=3)
    _, token = player(running)
    table = bot_table(running, token, hands=1)
    wait_for(lambda: status(running, table) == "finished", 120, "the bots finishing their table")
    process = running.service.start("gateway-b", kind="gateway")
    running.service.wait_gateway("gateway-b")
    for _ in range(40):  # the review's pattern first: handlers that outlived their sockets hung shutdown
        with connect(stream_url(running, table, after=100_000, token=token, name="gateway-b")) as ws:
            ws.send('{"type":"ping"}')
            ws.recv(timeout=10)
    held = [connect(stream_url(running, table, after=0, name="gateway-b")) for _ in range(5)]
    try:
        for ws in held:
            ws.recv(timeout=10)  # the table's last view
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=3 + 5)
        except Exception:
            process.kill()
            process.wait()
            raise AssertionError("the gateway was still running 5 s past its 3 s grace period") from None
        assert time.monotonic() - started < 8
        for ws in held:  # each socket was told the server is going away, or dropped
            with contextlib.suppress(ConnectionClosed, TimeoutError):
                while True:
                    ws.recv(timeout=5)
        assert all(ws.close_code in (1012, 1001, 1006, None) for ws in held)
    finally:
        for ws in held:
            ws.close()
    wait_for(lambda: subscribers(running, table) == 0, what="the gateway's subscriptions dropped")


# ---------------------------------------------------------------- logs


def test_no_token_reaches_any_log_line_of_any_part(service: Running, finished: tuple[str, str]) -> None:
    table, token = finished
    api = service.base + "/api/v1"
    bearer = {"Authorization": f"Bearer {token}"}
    assert httpx.get(f"{api}/tables/{table}/view", headers=bearer, timeout=10).status_code == 200
    assert httpx.post(f"{api}/tables/{table}/commands", headers=bearer, timeout=10,
                      json={"id": "c1", "command": {"type": "pass"}}).status_code >= 400
    assert httpx.get(f"{api}/tables/{table}/view?token={token}", timeout=10).status_code == 200
    forged = token[:-4] + "AAAA"
    assert httpx.get(f"{api}/tables/{table}/view", headers={"Authorization": f"Bearer {forged}"},
                     timeout=10).status_code == 401
    for candidate in (token, forged):
        with connect(stream_url(service, table, after=100_000, token=candidate)) as ws, \
                contextlib.suppress(ConnectionClosed):
            ws.send('{"type":"command","id":"c2","command":{"type":"pass"}}')
            ws.recv(timeout=10)
    time.sleep(0.5)  # the parts write their lines as they go; nothing to wait for but the pipe
    signature = token.rsplit(".", 1)[-1]
    leaking = [f"{name}: {line[:200]}" for name, line in log_lines(service)
               if signature in line or forged.rsplit(".", 1)[-1] in line]
    assert not leaking, "tokens in the logs:\n" + "\n".join(leaking[:5])


def test_ordinary_disconnects_log_no_error_and_no_traceback(service: Running) -> None:
    _, token = player(service)
    table = bot_table(service, token, hands=2)
    for i in range(20):
        ws = connect(stream_url(service, table, token=token))
        ws.recv(timeout=10)
        if i % 2:
            drop(ws)
        else:
            ws.close(code=1001)
    wait_for(lambda: gauge(service) == 0, what="the open-sockets gauge back at 0")
    bad = [line[:300] for line in gateway_lines(service)
           if "Traceback" in line or '"level":"error"' in line or line.startswith("ERROR")]
    assert not bad, "errors logged for ordinary disconnects:\n" + "\n".join(bad[:5])


def test_routine_requests_and_sockets_write_no_info_line(service: Running, finished: tuple[str, str]) -> None:
    table, token = finished
    before = len(gateway_lines(service))
    for _ in range(10):
        assert httpx.get(f"{service.base}/api/v1/tables/{table}", timeout=10).status_code == 200
        with connect(stream_url(service, table, after=100_000, token=token)) as ws:
            ws.send('{"type":"ping"}')
            ws.recv(timeout=10)
    time.sleep(0.5)
    routine = [line[:200] for line in gateway_lines(service)[before:] if "INFO" in line or '"level":"info"' in line]
    assert len(routine) < 5, "a line per routine request or socket:\n" + "\n".join(routine[:5])

"""The gateway's permessage-deflate (services/gateway/deflate.py): negotiated as websockets
negotiates it, its frames compressed by ISA-L and read by any inflater (here websockets'
own client extension, zlib's), each frame against the ones before it."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from isal import isal_zlib
from websockets.extensions.permessage_deflate import (
    ClientPerMessageDeflateFactory,
    PerMessageDeflate,
)
from websockets.frames import Frame, Opcode

from bench.ws_servers import seat_frames
from services.gateway import deflate


def _negotiated(offer: ClientPerMessageDeflateFactory) -> tuple[PerMessageDeflate, PerMessageDeflate]:
    """The gateway's extension and the client's, as a handshake pairs them."""
    response, server = deflate.extensions()[0].process_request_params(offer.get_request_params(), [])
    client = offer.process_response_params(response, [])
    return server, client


def _sent(server: PerMessageDeflate, client: PerMessageDeflate, text: bytes) -> tuple[bytes, int]:
    """``text`` sent by the gateway and read by the client: what the client read, and the
    bytes it took on the wire."""
    wire = server.encode(Frame(Opcode.TEXT, text))
    assert wire.rsv1, "a data frame goes out compressed"
    return bytes(client.decode(wire).data), len(wire.data)


def test_a_browser_like_offer_is_answered_with_uvicorns_windows_and_compressed_by_isal() -> None:
    server, _ = _negotiated(ClientPerMessageDeflateFactory(client_max_window_bits=True))
    assert isinstance(server, deflate.IsalDeflate)
    assert (server.local_max_window_bits, server.remote_max_window_bits) == (12, 12)
    assert type(server.encoder) is type(isal_zlib.compressobj())  # type: ignore[comparison-overlap]


def test_a_seats_views_are_read_back_whole_each_a_fraction_of_its_size() -> None:
    """A seat's view frames over a played hand (as the gateway pushes them, one after
    every command: ``bench.ws_servers.seat_frames``), each read back as sent; past the
    first few, each costs under a quarter of its size on the wire (deflate keeps its
    window from frame to frame: ISA-L's level 0 sends about a fifth)."""
    server, client = _negotiated(ClientPerMessageDeflateFactory(client_max_window_bits=True))
    wire_total = text_total = 0
    for n, text in enumerate(seat_frames(hands=1)[1]):
        read, wire = _sent(server, client, text)
        assert read == text
        if n >= 5:
            wire_total, text_total = wire_total + wire, text_total + len(text)
    assert wire_total < text_total / 4


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=6000) | st.text(max_size=3000).map(str.encode)
                | st.text(alphabet='{}":,abc0123', min_size=4000, max_size=9000).map(str.encode), min_size=1, max_size=12))
def test_any_frames_are_read_back_as_sent_in_order(texts: list[bytes]) -> None:
    """Sent twice over: a frame larger than the 4 KiB window repeated must not be matched
    against beyond it (the client's inflater has only that window)."""
    server, client = _negotiated(ClientPerMessageDeflateFactory(client_max_window_bits=True))
    assert client.remote_max_window_bits == 12
    for text in texts + texts:
        assert _sent(server, client, text)[0] == text


@pytest.mark.parametrize("takeover", [True, False])
def test_no_context_takeover_asked_by_the_client_is_kept_to(takeover: bool) -> None:
    """A client may ask the server to compress each message on its own (RFC 7692 §7.1.1.1):
    websockets' zlib path does that, and the frames still read back."""
    offer = ClientPerMessageDeflateFactory(server_no_context_takeover=not takeover, client_max_window_bits=True)
    server, client = _negotiated(offer)
    assert server.local_no_context_takeover is (not takeover)
    for text in (b"x" * 500, b'{"type":"ack","id":"c1","version":3}', b"x" * 500):
        assert _sent(server, client, text)[0] == text


@pytest.mark.parametrize("on", [True, False])
def test_the_gateways_socket_protocol_offers_this_deflate_unless_switched_off(on: bool) -> None:
    import uvicorn
    from uvicorn.server import ServerState

    from services.gateway.sockets import socket_protocol

    async def app(scope: object, receive: object, send: object) -> None:
        raise AssertionError("no request in this test")

    config = uvicorn.Config(app, ws=socket_protocol(), ws_per_message_deflate=on, lifespan="off")
    config.load()

    async def made() -> Any:  # a protocol is made on the server's loop
        return socket_protocol()(config=config, server_state=ServerState(), app_state={})  # type: ignore[call-arg]

    factories = asyncio.run(made()).conn.available_extensions or []
    assert [type(f) for f in factories] == ([deflate.IsalDeflateFactory] if on else [])


@pytest.mark.parametrize("bits", [9, 10, 11, 12])
def test_a_smaller_window_asked_by_the_client_bounds_every_match(bits: int) -> None:
    """A client may ask for a window smaller than 2^12 (``server_max_window_bits``): its
    inflater holds no more, so a frame repeated from further back is sent afresh."""
    server, client = _negotiated(ClientPerMessageDeflateFactory(server_max_window_bits=bits,
                                                                client_max_window_bits=True))
    assert server.local_max_window_bits == client.remote_max_window_bits == bits
    rng = random.Random(bits)
    frame = bytes(rng.choice(b'{}":,legalbid0123') for _ in range(6000))
    for text in (frame, frame, frame[:3000] + frame, frame[-100:]):
        assert _sent(server, client, text)[0] == text

"""`mighty bench push`: what one push costs a gateway, step by step, in one process.

A push is a seat's stored view, published by the views worker, made into the frame its
reader is sent (docs/gateway.md, *Sockets*; ``routes/play.py``'s pusher):

- ``decode``: the stored view read (``views.decode_stored``: MessagePack to a dict);
- ``document``: the API's view document made of it (``views.document_of``: the reshape,
  the labelled legal commands of the seat to act, who played each trick card);
- ``encode``: the ``view`` frame's JSON (``views.view_frame``);
- ``send``: the frame as the gateway's socket writes it, the bytes handed to the
  transport: websockets' ``send_text`` and ``data_to_send`` with the gateway's
  permessage-deflate (``deflate.IsalDeflate``, context kept from frame to frame), as
  ``sockets.socket_protocol``'s ``write_now`` calls them; without the ``write`` system
  call itself, which a socket on loopback makes a measure of the kernel's, not ours.

The stored views are every seat's, after every command, of ``--tables`` five-seat
tables played at random for ``--events`` events each (``bench.audit.played_events``,
folded by the views projection as the worker folds them: a flush a command). Each step
runs over all of them in turn, ``--rounds`` times; the figures are the medians, in µs a
push, apart for the seat to act (its legal commands labelled) and the others. Every
frame sent is read back through the websockets client's own inflater and compared with
the frame made (``frames_not_as_sent``).

``deflate_levels``: each of ISA-L's levels over the same seats' frames in order, µs a
frame and bytes on the wire (the data behind ``deflate.LEVEL``).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from typing import Any, Final

from isal import isal_zlib
from websockets.client import ClientProtocol
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
from websockets.frames import Frame
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from bench.audit import played_events
from domain.codec import decode_event
from projections.docs import LastWord
from projections.views import ViewsProjection
from services.gateway import deflate, views

LANG: Final = "en"
APPEND_MS: Final = 1_700_000_000_000  # the first event's append time; a second between events


def stored_views(tables: int, events: int) -> list[list[bytes]]:
    """Each seat's stored views, in order, of ``tables`` tables played at random (a list a
    seat of each table: seat views only, not the spectator's, not a closed table's last
    word, which a push shows from the spectator's view)."""
    seats: list[list[bytes]] = []
    for t in range(tables):
        table_id = f"bench-push-{t}"
        projection = ViewsProjection()
        mine: dict[str, list[bytes]] = {}
        stored = played_events(table_id, events, seed=t)
        at = 0
        while at < len(stored):  # one command's events, then a flush: the worker's batch
            command = stored[at].command_id
            while at < len(stored) and stored[at].command_id == command:
                event = stored[at]
                projection.apply(table_id, event.version, decode_event(event.data), APPEND_MS + event.version * 1000)
                at += 1
            for doc, data in projection.flush().items():
                reader = doc.name.rpartition(":")[2]
                if doc.field is None and reader.isdigit() and isinstance(data, bytes) \
                        and not isinstance(data, LastWord):
                    mine.setdefault(reader, []).append(bytes(data))
        seats.extend(mine[r] for r in sorted(mine))
    return seats


def seat_frames(seats: list[list[bytes]]) -> list[list[bytes]]:
    """Each seat's ``view`` frames, made of its stored views as a push makes them."""
    return [[views.view_frame(views.document_of(views.decode_stored(s), None, LANG)) for s in seat]
            for seat in seats]


def _sender() -> tuple[ServerProtocol, ClientProtocol]:
    """An open server connection with the gateway's deflate as a browser's offer
    negotiates it, and an open client connection that reads its frames."""
    offer = ClientPerMessageDeflateFactory(client_max_window_bits=True)
    response, server_deflate = deflate.extensions()[0].process_request_params(offer.get_request_params(), [])
    connection = ServerProtocol(state=State.OPEN)
    connection.extensions = [server_deflate]
    reader = ClientProtocol(parse_uri("ws://bench/"), state=State.OPEN)
    reader.extensions = [offer.process_response_params(response, [])]
    return connection, reader


def _read_back(reader: ClientProtocol, wire: bytes) -> bytes:
    """The text of the one server frame in ``wire``, as the client reads it."""
    reader.receive_data(wire)
    (frame,) = reader.events_received()
    assert isinstance(frame, Frame)  # an open connection's events are frames
    return bytes(frame.data)


def measure(seats: list[list[bytes]], framed: list[list[bytes]], rounds: int) -> dict[str, Any]:
    """The medians of each step, in µs a push, for the seat to act and the others
    (``framed``: ``seat_frames(seats)``)."""
    flat = [stored for seat in seats for stored in seat]
    acting = [bool((views.decode_stored(s).get("hand") or {}).get("legal")) for s in flat]
    frames = [frame for seat in framed for frame in seat]
    per: dict[str, dict[str, list[float]]] = {kind: {"decode": [], "document": [], "encode": [], "send": []}
                                              for kind in ("to_act", "others")}
    not_as_sent = 0
    for _ in range(rounds):
        for kind, wanted in (("to_act", True), ("others", False)):
            chosen = [i for i, a in enumerate(acting) if a is wanted]
            stored = [flat[i] for i in chosen]
            # each step timed with the ones before it, as a push runs them, and told apart
            # by difference: a document kept from a loop before would keep thousands of
            # decoded views alive, and the collector's passes over them would be timed too
            started = time.perf_counter()
            for data in stored:
                views.decode_stored(data)
            decode = time.perf_counter() - started
            started = time.perf_counter()
            for data in stored:
                views.document_of(views.decode_stored(data), None, LANG)
            document = time.perf_counter() - started - decode
            started = time.perf_counter()
            for data in stored:
                views.view_frame(views.document_of(views.decode_stored(data), None, LANG))
            encode = time.perf_counter() - started - decode - document
            for name, total in (("decode", decode), ("document", document), ("encode", encode)):
                per[kind][name].append(total / len(stored) * 1e6)
        # a seat's frames go through one connection in order (deflate's window is a seat's)
        send = {"to_act": 0.0, "others": 0.0}
        count = {"to_act": 0, "others": 0}
        at = 0
        for seat in seats:
            connection, reader = _sender()
            for _stored in seat:
                frame, kind = frames[at], "to_act" if acting[at] else "others"
                at += 1
                started = time.perf_counter()
                connection.send_text(frame)
                wire = b"".join(connection.data_to_send())
                send[kind] += time.perf_counter() - started
                count[kind] += 1
                not_as_sent += _read_back(reader, wire) != frame
        for kind in send:
            per[kind]["send"].append(send[kind] / max(count[kind], 1) * 1e6)
    result: dict[str, Any] = {}
    for kind, steps in per.items():
        medians = {name: round(statistics.median(values), 2) for name, values in steps.items()}
        medians["push"] = round(sum(medians.values()), 2)
        result[kind] = medians
    result["pushes"] = {"to_act": sum(acting), "others": len(acting) - sum(acting)}
    result["frame_bytes"] = round(statistics.mean(len(f) for f in frames), 1)
    result["frames_not_as_sent"] = not_as_sent
    return result


def deflate_levels(frames: list[list[bytes]], rounds: int) -> dict[str, dict[str, float]]:
    """ISA-L's levels 0 to 3 over each seat's frames in order (one compressor a seat, as a
    socket keeps one): µs a frame (the compressor's ``compress`` and ``flush``) and bytes."""
    count = sum(len(seat) for seat in frames)
    levels: dict[str, dict[str, float]] = {}
    for level in (0, 1, 2, 3):
        times: list[float] = []
        wire = 0
        for _ in range(rounds):
            wire = 0
            started = time.perf_counter()
            for seat in frames:
                encoder = isal_zlib.compressobj(level, isal_zlib.DEFLATED, -deflate.WINDOW_BITS, deflate.MEM_LEVEL)
                for frame in seat:
                    wire += len(encoder.compress(frame) + encoder.flush(isal_zlib.Z_SYNC_FLUSH)) - len(deflate.SYNC_FLUSH_TAIL)
            times.append((time.perf_counter() - started) / count * 1e6)
        levels[str(level)] = {"us_per_frame": round(statistics.median(times), 2), "bytes_per_frame": round(wire / count, 1)}
    return levels


def run(tables: int, events: int, rounds: int) -> dict[str, Any]:
    seats = stored_views(tables, events)
    framed = seat_frames(seats)
    return {"bench": "push", "tables": tables, "events": events, "rounds": rounds, "lang": LANG,
            "deflate_level": deflate.LEVEL, **measure(seats, framed, rounds),
            "deflate_levels": deflate_levels(framed, rounds), "python": platform.python_version()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench push", description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=3)
    parser.add_argument("--events", type=int, default=700, help="events a table plays (about 12 a hand)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    args = parser.parse_args(argv)
    if args.tables < 1 or args.events < 20 or args.rounds < 1:
        parser.error("--tables and --rounds at least 1, --events at least 20")
    print(json.dumps(run(args.tables, args.events, args.rounds)))
    return 0

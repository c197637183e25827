"""``mighty bench push`` measures what it says: the pushes it times are every seat's
stored views of played tables, in order, split between the seat to act and the others,
and every frame it sends is read back, through a client's inflater, as it was made.
Nothing here is timed."""

from __future__ import annotations

import json

import pytest

from bench import push
from services.gateway import deflate, views


def test_the_stored_views_are_each_seats_in_order_and_only_seat_views() -> None:
    seats = push.stored_views(tables=2, events=60)
    assert len(seats) == 2 * 5
    for seat in seats:
        docs = [views.decode_stored(data) for data in seat]
        assert {doc["reader"] for doc in docs} == {docs[0]["reader"]}
        assert docs[0]["reader"].isdigit()
        versions = [doc["version"] for doc in docs]
        assert versions == sorted(versions) and len(set(versions)) == len(versions)


def test_every_frame_is_read_back_as_made_and_both_kinds_of_push_are_measured() -> None:
    seats = push.stored_views(tables=1, events=80)
    result = push.measure(seats, push.seat_frames(seats), rounds=1)
    assert result["frames_not_as_sent"] == 0
    assert result["pushes"]["to_act"] > 0 and result["pushes"]["others"] > result["pushes"]["to_act"]
    assert result["pushes"]["to_act"] + result["pushes"]["others"] == sum(len(seat) for seat in seats)
    for kind in ("to_act", "others"):
        steps = result[kind]
        assert set(steps) == {"decode", "document", "encode", "send", "push"}
        assert steps["decode"] > 0 and steps["send"] > 0  # timed alone (the others by difference)


def test_a_frame_sent_compressed_is_read_back_whole() -> None:
    connection, client = push._sender()
    text = b'{"type":"view","version":1,"view":{"hand":["AS","KS"]}}' * 40  # over 125 bytes: a longer header
    connection.send_text(text)
    wire = b"".join(connection.data_to_send())
    assert wire[0] & 0x40, "sent compressed (RSV1)"
    assert len(wire) < len(text)
    assert push._read_back(client, wire) == text


def test_the_levels_are_isals_four_and_the_gateways_is_among_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert push.main(["--tables", "1", "--events", "40", "--rounds", "1"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["bench"] == "push" and result["deflate_level"] == deflate.LEVEL
    assert set(result["deflate_levels"]) == {"0", "1", "2", "3"}
    sizes = {level: figures["bytes_per_frame"] for level, figures in result["deflate_levels"].items()}
    assert all(0 < size < result["frame_bytes"] for size in sizes.values())
    assert sizes["3"] <= sizes["0"]  # a slower level never sends more here


def test_the_benchmark_refuses_sizes_it_cannot_measure(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        push.main(["--events", "3"])
    assert "--events at least 20" in capsys.readouterr().err

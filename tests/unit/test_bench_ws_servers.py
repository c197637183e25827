"""``mighty bench ws_servers`` measures what it says: every server it compares sends each
socket its seat's frames whole and in order, deflated exactly when negotiated (the
picows server's deflate is written in the benchmark itself: a client's inflater must
read it). Nothing here is timed."""

from __future__ import annotations

import json

import pytest

from bench import ws_servers


def test_a_seats_frames_are_its_views_in_order() -> None:
    frames = ws_servers.seat_frames(hands=1)
    assert len(frames) == ws_servers.SEATS
    assert len({len(seat) for seat in frames}) == 1  # a frame to every seat after each command
    for seat, sent in enumerate(frames):
        versions = [json.loads(frame)["version"] for frame in sent]
        assert versions == sorted(versions) and len(set(versions)) == len(versions)
        assert all(json.loads(frame)["view"]["seat"] == seat for frame in sent)


@pytest.mark.parametrize("server", ws_servers.SERVERS)
def test_every_server_delivers_every_frame_as_sent(server: str) -> None:
    result = ws_servers.run_one(server, sockets=7, rounds=12, rate=2000.0)
    assert result["frames"] == 7 * 12
    assert result["frames_not_as_sent"] == 0
    if server.endswith("deflate"):
        assert result["deflate"] and result["deflate"].startswith("permessage-deflate")
    else:
        assert result["deflate"] is None
    assert result["server_us_per_frame"] > 0


def test_the_benchmark_refuses_a_server_it_does_not_know(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        ws_servers.main(["--servers", "uvicorn,nginx", "--repeat", "1"])
    assert "unknown servers: nginx" in capsys.readouterr().err

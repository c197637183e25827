"""The `mighty` CLI answers bad input and an unreachable Redis with one line on stderr
and a documented exit status, never a traceback."""

from __future__ import annotations

import pytest

from services import cli

NOWHERE = "redis://127.0.0.1:1/0"  # port 1: connection refused at once


@pytest.mark.parametrize("argv", [
    ["log", "t1", "--redis-url", NOWHERE],
    ["verify", "t1", "--redis-url", NOWHERE],
    ["projections", "lag", "--redis-url", NOWHERE],
])
def test_an_unreachable_redis_is_exit_4_with_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == cli.EXIT_UNAVAILABLE == 4
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "Redis is unreachable" in err and "REDIS_URL" in err and "Traceback" not in err


def test_a_bad_table_id_is_exit_2_with_its_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["verify", "bad id!", "--redis-url", NOWHERE]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mighty verify: bad_table_id: ") and err.count("\n") == 1


def test_an_unreachable_postgresql_is_exit_4_naming_the_archive_url_not_redis(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["worker", "archive", "--once", "--redis-url", NOWHERE, "--archive-url", "postgresql://x@127.0.0.1:1/none"]
    assert cli.main(argv) == cli.EXIT_UNAVAILABLE
    err = capsys.readouterr().err
    assert "PostgreSQL is unreachable" in err and "MIGHTY_ARCHIVE_URL" in err and "REDIS_URL" not in err
    assert err.count("\n") == 1

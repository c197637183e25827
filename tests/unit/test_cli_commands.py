"""The `mighty` CLI as a newcomer meets it, without a store: every command that needs one
says so and exits 2; the parser offers only commands that exist; a refused command in a
replay is said on stderr too; output into a closed pipe ends quietly."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from services import cli

HANDS = Path(__file__).resolve().parents[1] / "hands"

STORE_COMMANDS = [
    ["log", "t1"], ["verify", "t1"], ["verify", "--all"], ["export", "t1"],
    ["projections", "rebuild"], ["projections", "check"], ["projections", "lag"],
    ["projections", "ledger"], ["projections", "lobby"], ["worker", "views"], ["gateway"],
]


@pytest.mark.parametrize("argv", STORE_COMMANDS, ids=" ".join)
def test_a_store_command_without_a_redis_url_says_so_in_one_line_and_exits_2(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"mighty {argv[0]}") and "set REDIS_URL (or --redis-url)" in err


@pytest.mark.parametrize("argv", STORE_COMMANDS, ids=" ".join)
def test_every_store_command_takes_the_store_options_alike(argv: list[str]) -> None:
    args = cli.build_parser().parse_args([*argv, "--redis-url", "redis://h:1/0", "--namespace", "ns",
                                          "--partitions", "4"])
    assert (args.redis_url, args.namespace, args.partitions) == ("redis://h:1/0", "ns", "4")


def test_a_bad_setting_in_the_environment_is_one_line_naming_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("MIGHTY_PARTITIONS", "lots")
    assert cli.main(["log", "t1"]) == 2
    err = capsys.readouterr().err
    assert err == "mighty log: MIGHTY_PARTITIONS='lots': the partition count is an integer in 1..999\n"


def test_the_demo_names_every_game_when_the_variant_is_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "--variant", "mighty-9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mighty demo: unknown variant 'mighty-9'; known: mighty-5") and err.count("\n") == 1
    assert "mighty-8" in err and "mitigati" in err


def test_the_parser_offers_exactly_the_commands_the_cli_documents() -> None:
    parser = cli.build_parser()
    offered = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    rows = [line.split("|")[2] for line in (cli.__doc__ or "").splitlines() if line.startswith("| ``")]
    documented = {name for row in rows for name in re.findall(r"``(\w+)", row)}
    assert offered == documented
    assert "serve" not in offered


def test_a_refused_command_is_also_one_line_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["replay", str(HANDS / "reject-must-follow-suit.json")]) == 3
    out, err = capsys.readouterr()
    rejected = json.loads(out)["rejected"]
    assert err == (f"mighty replay: {HANDS / 'reject-must-follow-suit.json'}: commands[{rejected['index']}] "
                   f"(seat {rejected['seat']}) refused: {rejected['code']}: {rejected['message']}\n")


def test_a_complete_replay_says_nothing_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["replay", str(HANDS / "complete-alone.json")]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("argv", "status"), [
    (["replay", str(HANDS / "complete-alone.json")], {cli.EXIT_BROKEN_PIPE}),
    (["replay", str(HANDS / "complete-alone.json"), "--as", "1"], {cli.EXIT_BROKEN_PIPE}),
    (["replay", str(HANDS / "reject-must-follow-suit.json"), "--as", "0"], {cli.EXIT_BROKEN_PIPE}),
    (["--help"], {0, cli.EXIT_BROKEN_PIPE}),  # argparse swallows the failed write itself
], ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_output_into_a_closed_pipe_ends_quietly(argv: list[str], status: set[int]) -> None:
    process = subprocess.Popen([sys.executable, "-m", "services.cli", *argv],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before the child has written anything: its first write fails
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) in status
    assert "Traceback" not in err and "BrokenPipe" not in err

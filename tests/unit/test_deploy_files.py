"""deploy/: the Procfile and the systemd units start commands the CLI accepts, one worker
of each kind, and the env example documents only settings the code reads."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from projections import KINDS
from services import cli

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def procfile() -> dict[str, list[str]]:
    lines = [line for line in (DEPLOY / "Procfile").read_text().splitlines() if line and not line.startswith("#")]
    return {name: shlex.split(command) for name, command in (line.split(":", 1) for line in lines)}


def parse(argv: list[str]) -> object:
    return cli.build_parser().parse_args(argv)


def test_the_procfile_runs_redis_and_one_worker_of_each_kind() -> None:
    processes = procfile()
    assert processes.pop("redis")[:2] == ["redis-server", "deploy/redis.conf"]
    assert (DEPLOY / "redis.conf").exists()
    kinds = []
    for argv in processes.values():
        assert argv[0] == "mighty"
        args = parse(argv[1:])
        assert args.command == "worker"  # type: ignore[attr-defined]
        kinds.append(args.kind)  # type: ignore[attr-defined]
    assert sorted(kinds) == sorted(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_the_worker_unit_starts_a_worker_the_cli_accepts(kind: str) -> None:
    unit = (DEPLOY / "systemd" / "mighty-worker@.service").read_text()
    exec_start = re.search(r"^ExecStart=(.+)$", unit, re.M)
    assert exec_start is not None
    argv = shlex.split(exec_start.group(1).replace("%i", kind))
    assert Path(argv[0]).name == "mighty"
    args = parse(argv[1:])
    assert (args.command, args.kind) == ("worker", kind)  # type: ignore[attr-defined]
    assert "KillSignal=SIGTERM" in unit  # the worker's clean stop


def test_the_env_example_holds_only_settings_the_code_reads() -> None:
    names = [line.split("=", 1)[0] for line in (DEPLOY / "mighty.env.example").read_text().splitlines()
             if line and not line.startswith("#")]
    source = "\n".join(p.read_text() for p in (ROOT / "services").rglob("*.py"))
    assert names and all(f'"{name}"' in source for name in names), names


def test_the_env_example_lists_every_setting_and_each_value_is_accepted() -> None:
    from services.settings import ENVIRONMENT, settings_from

    example = dict(line.split("=", 1) for line in (DEPLOY / "mighty.env.example").read_text().splitlines()
                   if line and not line.startswith("#"))
    assert set(example) == set(ENVIRONMENT.values())
    settings = settings_from(None, environ=example)
    assert settings.as_env() == example  # read back as written: nothing ignored, nothing renamed


def test_the_worker_unit_also_starts_the_archive_worker() -> None:
    unit = (DEPLOY / "systemd" / "mighty-worker@.service").read_text()
    exec_start = re.search(r"^ExecStart=(.+)$", unit, re.M)
    assert exec_start is not None
    args = parse(shlex.split(exec_start.group(1).replace("%i", "archive"))[1:])
    assert (args.command, args.kind, args.once) == ("worker", "archive", False)  # type: ignore[attr-defined]

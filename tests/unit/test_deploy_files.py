"""deploy/: the Procfile and the systemd units start commands the CLI accepts, every part
``mighty serve`` runs (``services.serve.parts``), each unit restarted, bounded and
hardened; the env example documents only settings the code reads."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from projections import KINDS
from services import cli
from services.serve import parts
from services.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def procfile() -> dict[str, list[str]]:
    lines = [line for line in (DEPLOY / "Procfile").read_text().splitlines() if line and not line.startswith("#")]
    return {name: shlex.split(command) for name, command in (line.split(":", 1) for line in lines)}


def parse(argv: list[str]) -> object:
    return cli.build_parser().parse_args(argv)


SYSTEMD = DEPLOY / "systemd"
# every part, the archive worker with it (it runs once an archive URL is set)
EVERY_PART = parts(Settings(archive_url="postgresql://mighty@127.0.0.1:5432/mighty"))


def what_it_runs(argv: list[str]) -> tuple[str, str | None]:
    """The CLI command a command line runs, and the worker kind if a worker."""
    args = parse(argv)
    return args.command, getattr(args, "kind", None)  # type: ignore[attr-defined]


def part_runs(name: str) -> tuple[str, str | None]:
    (part,) = [p for p in EVERY_PART if p.name == name]
    assert part.argv[1:3] == ["-m", "services.cli"]
    return what_it_runs(part.argv[3:])


def unit_of(part: str) -> tuple[str, list[str]]:
    """The unit that runs ``part``: its text and its ExecStart (the instance filled in)."""
    if part == "gateway":
        unit = (SYSTEMD / "mighty-gateway.service").read_text()
    else:
        unit = (SYSTEMD / "mighty-worker@.service").read_text().replace("%i", part)
    exec_start = re.search(r"^ExecStart=(.+)$", unit, re.M)
    assert exec_start is not None
    return unit, shlex.split(exec_start.group(1))


def test_serve_runs_the_gateway_and_every_worker() -> None:
    assert sorted(p.name for p in EVERY_PART) == sorted([*KINDS, "bots", "timers", "archive", "gateway"])


def test_the_procfile_runs_redis_and_every_part_serve_runs_once() -> None:
    processes = procfile()
    assert processes.pop("redis")[:2] == ["redis-server", "deploy/redis.conf"]
    assert (DEPLOY / "redis.conf").exists()
    assert all(argv[0] == "mighty" for argv in processes.values())
    runs = sorted((what_it_runs(argv[1:]) for argv in processes.values()), key=str)
    assert runs == sorted((part_runs(p.name) for p in EVERY_PART), key=str)


@pytest.mark.parametrize("part", [p.name for p in EVERY_PART])
def test_every_part_has_a_systemd_unit_that_runs_it_restarts_it_bounds_and_hardens_it(part: str) -> None:
    unit, argv = unit_of(part)
    assert Path(argv[0]).name == "mighty"
    assert what_it_runs(argv[1:]) == part_runs(part)
    settings = dict(re.findall(r"^([A-Za-z]+)=(.*)$", unit, re.M))
    assert settings["Restart"] == "always" and float(settings["RestartSec"]) > 0
    assert settings["StartLimitIntervalSec"] == "0"  # retried for ever, as serve does once ready
    assert settings["KillSignal"] == "SIGTERM" and int(settings["TimeoutStopSec"]) > 0
    assert int(settings["LimitNOFILE"]) >= 4096 and settings["MemoryMax"].endswith(("M", "G"))
    assert settings["EnvironmentFile"] == "/etc/mighty/mighty.env"
    assert settings["User"] == "mighty"
    for hardening in ("NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes"):
        assert f"\n{hardening}\n" in unit, hardening
    assert "WantedBy=mighty.target" in unit and "PartOf=mighty.target" in unit


def test_the_mighty_target_wants_every_part() -> None:
    target = (SYSTEMD / "mighty.target").read_text()
    wanted = {w for line in re.findall(r"^Wants=(.+)$", target, re.M) for w in line.split()}
    assert {"mighty-gateway.service" if p.name == "gateway" else f"mighty-worker@{p.name}.service"
            for p in EVERY_PART} <= wanted
    assert "mighty-redis.service" in wanted


def test_the_gateway_stops_before_the_workers() -> None:
    gateway = (SYSTEMD / "mighty-gateway.service").read_text()
    after = {w for line in re.findall(r"^After=(.+)$", gateway, re.M) for w in line.split()}
    assert {f"mighty-worker@{p.name}.service" for p in EVERY_PART if p.name != "gateway"} <= after


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

    lines = (DEPLOY / "mighty.env.example").read_text().splitlines()
    example = dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))
    # a setting with no default (the token secret, CORS origins) is shown commented out,
    # with what to put there: the example never ships a secret
    optional = dict(m.groups() for line in lines if (m := re.fullmatch(r"# ([A-Z][A-Z0-9_]*)=(.*)", line)))
    assert set(example) | set(optional) == set(ENVIRONMENT.values())
    assert not set(example) & set(optional)
    settings = settings_from(None, environ=example)
    assert settings.as_env() == example  # read back as written: nothing ignored, nothing renamed
    given = {name: value for name, value in optional.items() if value}
    assert settings_from(None, environ={**example, **given}).as_env() == {**example, **given}


def test_the_worker_unit_also_starts_the_archive_worker() -> None:
    unit = (DEPLOY / "systemd" / "mighty-worker@.service").read_text()
    exec_start = re.search(r"^ExecStart=(.+)$", unit, re.M)
    assert exec_start is not None
    args = parse(shlex.split(exec_start.group(1).replace("%i", "archive"))[1:])
    assert (args.command, args.kind, args.once) == ("worker", "archive", False)  # type: ignore[attr-defined]

"""The `mighty` commands that read a store, run as a newcomer runs them (subprocesses of
the real CLI) against a private redis-server: the namespace is honoured by flag and by
environment alike, nothing found is said and is exit 2, hands count from 1, `projections
lag` summarises, output into a closed pipe ends quietly, and `mighty demo` ends with
commands that work as printed."""

from __future__ import annotations

import json
import os
import random
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import redis

from domain.table import CreateTable, Submission
from projections import KINDS
from services.audit import export_hand
from services.bootstrap import wire
from services.players import next_submission, seating
from services.redis_runtime import PrivateRedis
from services.settings import Settings

pytestmark = pytest.mark.integration

NS = "audit-ns"


def play(client: redis.Redis, table_id: str, hands: int, namespace: str = NS) -> Any:
    """A table played to ``hands`` scored hands under ``namespace``; no workers run."""
    wiring = wire(client, Settings(namespace=namespace, partitions=16))
    rng = random.Random(7)
    subs = [Submission(CreateTable(), "ana"), *seating(["ana", "bo", "cy", "di", "ed"])]
    for n, sub in enumerate(subs):
        wiring.handler.handle(table_id, sub, command_id=f"{table_id}-{n}")
    n = len(subs)
    while wiring.handler.state_of(table_id)[0].hands_scored < hands:
        sub = next_submission(wiring.handler.state_of(table_id)[0], rng)
        assert sub is not None
        wiring.handler.handle(table_id, sub, command_id=f"{table_id}-{n}")
        n += 1
    return wiring


def mighty(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "services.cli", *args], env={**os.environ, **(env or {})},
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def table(redis_server: PrivateRedis, redis_client: redis.Redis) -> Any:
    return play(redis_client, "t1", hands=2)


def test_the_namespace_is_honoured_by_flag_and_by_environment(redis_server: PrivateRedis, table: Any) -> None:
    url = redis_server.url
    for command in (["log", "t1"], ["verify", "t1"], ["export", "t1"]):
        by_flag = mighty(*command, "--redis-url", url, "--namespace", NS)
        by_env = mighty(*command, env={"REDIS_URL": url, "MIGHTY_NAMESPACE": NS})
        assert by_flag.returncode == by_env.returncode == 0, by_flag.stderr + by_env.stderr
        assert by_flag.stdout == by_env.stdout != ""
    every = mighty("verify", "--all", env={"REDIS_URL": url, "MIGHTY_NAMESPACE": NS})
    assert every.returncode == 0 and json.loads(every.stdout.splitlines()[-1])["tables"] == 1


@pytest.mark.parametrize("command", [["log", "t1"], ["verify", "t1"], ["export", "t1"], ["log", "nosuch"]],
                         ids=" ".join)
def test_a_table_not_found_is_said_with_where_it_was_looked_for(
        redis_server: PrivateRedis, table: Any, command: list[str]) -> None:
    looked = NS if command[1] == "nosuch" else "mighty"
    done = mighty(*command, "--redis-url", redis_server.url, *(["--namespace", NS] if looked == NS else []))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert f"table {command[1]} has no events under namespace '{looked}' at {redis_server.url}" in done.stderr


def test_verify_all_of_an_empty_namespace_is_not_a_success(redis_server: PrivateRedis, table: Any) -> None:
    done = mighty("verify", "--all", "--redis-url", redis_server.url, "--namespace", "elsewhere")
    assert done.returncode == 2
    assert json.loads(done.stdout) == {"tables": 0, "ok": 0, "bad": []}
    assert "no tables under namespace 'elsewhere'" in done.stderr


def test_export_hand_1_is_the_first_hand_and_log_counts_hands_from_1(
        redis_server: PrivateRedis, table: Any) -> None:
    store = ["--redis-url", redis_server.url, "--namespace", NS]
    stored = table.store.read("t1")
    first = mighty("export", "t1", "--hand", "1", *store)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == json.loads(json.dumps(export_hand("t1", stored, 0)))
    last = mighty("export", "t1", *store)
    dealt = [line for line in mighty("log", "t1", *store).stdout.splitlines() if " hand_dealt " in line]
    assert json.loads(last.stdout) == json.loads(json.dumps(export_hand("t1", stored, len(dealt) - 1)))
    assert [line.split(" hand=")[1].split()[0] for line in dealt] == [str(n) for n in range(1, len(dealt) + 1)]
    assert "hand_no=" not in mighty("log", "t1", *store).stdout

    zero = mighty("export", "t1", "--hand", "0", *store)
    assert zero.returncode == 2 and "--hand counts from 1" in zero.stderr
    beyond = mighty("export", "t1", "--hand", str(len(dealt) + 1), *store)
    assert beyond.returncode == 2
    assert f"has dealt {len(dealt)} hands (1..{len(dealt)}): there is no hand {len(dealt) + 1}" in beyond.stderr


def test_projections_lag_is_one_line_per_kind_and_one_per_partition_behind(
        redis_server: PrivateRedis, table: Any) -> None:
    store = ["--redis-url", redis_server.url, "--namespace", NS]
    behind = [json.loads(line) for line in mighty("projections", "lag", *store).stdout.splitlines()]
    summaries = [row for row in behind if "behind" in row]
    assert [row["kind"] for row in summaries] == list(KINDS)
    assert all(row["behind"] == 1 and row["partitions"] == 16 and row["entries"] > 0 for row in summaries)
    assert len(behind) == 2 * len(KINDS)  # no workers ran: the one table's partition, per kind
    detail = mighty("projections", "lag", "--partitions-detail", *store).stdout.splitlines()
    assert len(detail) == len(KINDS) * 17

    assert mighty("projections", "rebuild", *store).returncode == 0
    caught_up = [json.loads(line) for line in mighty("projections", "lag", *store).stdout.splitlines()]
    assert caught_up == [{"kind": kind, "partitions": 16, "behind": 0, "entries": 0, "ms": 0, "dead_letters": 0}
                         for kind in KINDS]


@pytest.mark.parametrize("command", [
    ["log", "t1"], ["verify", "--all"], ["verify", "t1"], ["export", "t1"],
    ["projections", "lag", "--partitions-detail"], ["projections", "check"], ["projections", "ledger"],
    ["projections", "lobby"], ["projections", "rebuild"],
], ids=" ".join)
def test_a_store_command_into_a_closed_pipe_ends_quietly(
        redis_server: PrivateRedis, table: Any, command: list[str]) -> None:
    process = subprocess.Popen([sys.executable, "-m", "services.cli", *command, "--redis-url", redis_server.url,
                                "--namespace", NS], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before the child has written anything
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141, err
    assert "Traceback" not in err


def test_the_demo_prints_its_namespace_tables_and_commands_that_work_as_printed(
        redis_server: PrivateRedis, tmp_path: Path) -> None:
    done = mighty("demo", "--tables", "2", "--hands", "1", env={"REDIS_URL": redis_server.url}, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    where = next(line for line in lines if line.startswith("The tables are in "))
    namespace = where.split(" under namespace ")[1].split(":")[0]
    tables = where.split(": ", 1)[1].rstrip(".").split(", ")
    assert namespace.startswith("demo-") and len(tables) == 2
    commands = [shlex.split(line) for line in lines if line.startswith("  mighty ")]
    assert {argv[1] for argv in commands} >= {"verify", "log", "export", "projections"}
    for argv in commands:
        assert argv[argv.index("--namespace") + 1] == namespace
        assert argv[argv.index("--redis-url") + 1] == redis_server.url
        ran = subprocess.run([sys.executable, "-m", "services.cli", *argv[1:]], capture_output=True, text=True,
                             timeout=60, env={k: v for k, v in os.environ.items() if k != "REDIS_URL"})
        assert ran.returncode == 0, (argv, ran.stderr)
        assert ran.stdout.strip()
    verified = subprocess.run([sys.executable, "-m", "services.cli", *commands[0][1:]], capture_output=True,
                              text=True, timeout=60)
    assert [json.loads(line)["table"] for line in verified.stdout.splitlines()[:-1]] == tables


def test_the_demo_in_json_says_where_its_tables_are(redis_server: PrivateRedis) -> None:
    done = mighty("demo", "--tables", "1", "--hands", "1", "--json", "--namespace", "mine",
                  env={"REDIS_URL": redis_server.url}, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert (found["namespace"], found["redis"], found["redis_url"]) == ("mine", "given", redis_server.url)
    assert len(found["tables"]) == 1 and all("--namespace mine" in c for c in found["inspect"])


def test_the_demo_without_redis_url_says_its_tables_went_with_its_private_redis() -> None:
    done = mighty("demo", "--tables", "1", "--hands", "1", timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "were in a private redis-server that stopped with the demo: they are gone" in done.stdout
    assert "REDIS_URL=" in done.stdout and "--redis-url" not in done.stdout


def test_the_demo_into_a_closed_pipe_ends_quietly(redis_server: PrivateRedis) -> None:
    process = subprocess.Popen([sys.executable, "-m", "services.cli", "demo", "--tables", "1", "--hands", "1",
                                "--redis-url", redis_server.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141, err[-2000:]
    assert "Traceback" not in err

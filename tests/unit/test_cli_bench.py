"""``mighty bench``: standard output holds the benchmark's JSON and nothing else."""

from __future__ import annotations

import argparse
import json
import sys
import types

import pytest
import structlog

from services.cli.bench import cmd_bench


def test_a_benchmarks_log_lines_go_to_stderr_and_stdout_is_its_json_alone(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    structlog.reset_defaults()  # as in a fresh process: structlog's default prints to stdout
    module = types.ModuleType("bench.logs_a_line")

    def main(argv: list[str]) -> int:
        structlog.get_logger("mighty.bench").warning("redis started", port=1)
        print(json.dumps({"argv": argv}))
        return 0

    module.main = main  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bench.logs_a_line", module)
    monkeypatch.delenv("MIGHTY_LOG_LEVEL", raising=False)
    assert cmd_bench(argparse.Namespace(what="logs_a_line", rest=[], json=True)) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == {"argv": ["--json"]}
    assert "redis started" in err

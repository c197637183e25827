"""``mighty bench native`` tells each process's CPU apart by where perf's samples fell:
the interpreter, the C library, the kernel, every other native library. What it parses
and adds up is pinned here; the sampling itself is a benchmark run on purpose."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench import native

REPORT = """\
# Samples: 4K of event 'cpu-clock:ppp'
# Event count (approx.): 3180360696
#
# Overhead  Shared Object
# ........  .........................................
#
    62.00%  libpython3.11.so.1.0
    13.00%  [kernel.kallsyms]
     7.50%  libc.so.6
     7.50%  _core.cpython-311-x86_64-linux-gnu.so
     5.00%  isal_zlib.cpython-311-x86_64-linux-gnu.so
     3.00%  _asyncio.cpython-311-x86_64-linux-gnu.so
     2.00%  [vdso]


#
# (Tip: List events using substring match: perf list <keyword>)
"""


@pytest.mark.parametrize(("dso", "group"), [
    ("libpython3.11.so.1.0", "interpreter"),
    ("_asyncio.cpython-311-x86_64-linux-gnu.so", "interpreter"),  # CPython's own C module
    ("_struct.cpython-311-x86_64-linux-gnu.so", "interpreter"),
    ("libc.so.6", "libc"),
    ("[kernel.kallsyms]", "kernel"),
    ("[vdso]", "kernel"),
    ("_core.cpython-311-x86_64-linux-gnu.so", "native"),  # msgspec
    ("loop.cpython-311-x86_64-linux-gnu.so", "native"),  # uvloop
    ("libz.so.1.2.13", "native"),
    ("redis-server", "native"),
])
def test_each_shared_object_falls_in_its_group(dso: str, group: str) -> None:
    assert native.group_of(dso) == group


def test_a_reports_lines_add_up_by_group_and_its_comments_are_skipped() -> None:
    found = native.shares(REPORT)
    assert found == pytest.approx({"interpreter": 0.65, "libc": 0.075, "kernel": 0.15, "native": 0.125})
    assert sum(found.values()) == pytest.approx(1.0)
    assert native._samples(REPORT) == 4000


COUNTED = """\
# Samples: 1K of event 'cpu-clock:ppp'
#
# Overhead       Samples  Shared Object
# ........  ............  ....................
#
    60.00%           612  libpython3.11.so.1.0
    25.00%           255  [kernel.kallsyms]
    15.00%           153  hiredis.cpython-311-x86_64-linux-gnu.so
"""


def test_a_report_with_sample_counts_is_read_by_its_counts() -> None:
    assert native.shares(COUNTED) == pytest.approx({"interpreter": 0.6, "libc": 0.0, "kernel": 0.25, "native": 0.15})
    assert native._samples(COUNTED) == 1020  # the lines' counts, not the header's "1K"


def test_a_report_without_samples_gives_no_shares() -> None:
    assert native.shares("# Samples: 0 of event 'cpu-clock'\n#\n") == {}


def test_each_groups_share_of_a_process_times_its_cpu_a_command_gives_microseconds() -> None:
    load = {"cpu_us_per_command": {"gateway0": 400, "gateway1": 600, "views": 200, "directory": 40,
                                   "redis": 100, "client": 350, "total": 1690}}
    other = REPORT.replace("# Samples: 4K", "# Samples: 1K").replace("62.00%  libpython", "62.00%  libfoo.so")
    reports = {("gateways", 1): REPORT, ("gateways", 2): REPORT, ("views", 3): other, ("redis", 4): ""}
    result = native._result(load, reports)
    gateways = result["processes"]["gateways"]
    assert gateways["cpu_us_per_command"] == 1000 and gateways["samples"] == 8000
    assert gateways["us_per_command"] == {"interpreter": 650.0, "libc": 75.0, "kernel": 150.0, "native": 125.0}
    views = result["processes"]["views"]
    assert views["us_per_command"]["interpreter"] == pytest.approx(200 * 0.03)  # only _asyncio is left
    assert views["us_per_command"]["native"] == pytest.approx(200 * (0.62 + 0.125))
    assert "redis" not in result["processes"]  # no samples: no figure rather than a zero
    assert "directory" not in result["processes"]
    assert result["server_us_per_command"] == 1200
    assert result["interpreter_us"] == pytest.approx(650 + 6, abs=0.2)
    assert result["outside_us"] == pytest.approx(350 + 194, abs=0.2)
    assert result["outside_without_libc_us"] == pytest.approx(275 + 179, abs=0.2)


def test_a_runs_processes_are_found_under_it_with_their_command_lines() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(30)  # mighty-native-test"],
                             stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"up\n"  # its exec is over: its own command line
        found = dict(native._descendants(os.getpid()))
        assert child.pid in found
        assert "mighty-native-test" in found[child.pid]
    finally:
        child.kill()
        child.wait()


def test_the_sample_must_fit_in_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        native.main(["--seconds", "10", "--sample-seconds", "6"])
    assert "at most half" in capsys.readouterr().err


def test_without_perf_it_says_so_and_runs_nothing(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)
    started: list[object] = []
    monkeypatch.setattr("subprocess.Popen", lambda *a, **k: started.append(a))
    assert native.main(["--seconds", "10", "--sample-seconds", "2"]) == 2
    assert "needs perf" in capsys.readouterr().err
    assert started == []  # no load run begun

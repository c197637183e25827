"""`mighty bench native`: how much of each server process's CPU a command is spent outside
the Python interpreter, under the load of `mighty bench load`.

The question it answers (docs/performance.md, "Outside the interpreter"): if
every line of Python cost nothing, what would a command still cost this service? That is
the part of its CPU no optimisation of our Python can remove: the kernel (sockets,
loopback, the AOF's writes), the native libraries the processes call (msgspec, ISA-L's
deflate, uvloop, hiredis, zlib, OpenSSL's SHA-256) and Redis, which is native throughout
(its Lua included).

It runs `mighty bench load --json` with the arguments given, and once the tables have
played a third of the time, samples each server process (every gateway, the views and
the directory workers, the private redis-server) with `perf record -F FREQ -p PID` for
`--sample-seconds`. Each process's samples are told apart by the shared object they fell
in (`perf report --sort dso`):

- ``interpreter``: libpython and CPython's own C modules (``_asyncio``, ``_struct``...);
- ``libc``: the C library, most of it the interpreter's own allocations and copies, so
  counted apart: the floor is given with it (``outside_us``) and without it
  (``outside_without_libc_us``);
- ``kernel``: the kernel (system calls, the loopback's TCP on both of its ends);
- ``native``: everything else (third-party extensions and the libraries they link).

Each share times the process's CPU a command (the load's ``cpu_us_per_command``) gives
µs a command. Redis's samples are all native: its ``interpreter`` share is 0 by this
definition (the Lua it runs is C).

Prints one JSON object: the load's own result (``load``), and per process group
(``gateways``, ``views``, ``directory``, ``redis``) its µs a command, its shares and its
samples, and the totals. Needs `perf` (Debian's linux-perf) and a
``kernel.perf_event_paranoid`` that lets the user sample its own processes (2 or less);
says so and exits 2 otherwise. A profile, not a timing: run on purpose, never in the tests.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

import msgspec

from bench._processes import command_of, descendants_of

# CPython's own extension modules (lib-dynload) whose time is the interpreter's work
_CPYTHON_MODULES: Final = frozenset({
    "_asyncio", "_struct", "_bisect", "_heapq", "_json", "_socket", "select", "math", "_random",
    "_contextvars", "array", "_datetime", "_queue", "_pickle", "_posixsubprocess", "fcntl",
    "_opcode", "binascii", "_csv", "unicodedata", "_uuid", "_zoneinfo", "_statistics", "_blake2",
})
# "  62.00%   1234  libpython3.11.so.1.0": the share, the samples (``-n``), the shared object
_REPORT_LINE: Final = re.compile(r"^\s*([0-9.]+)%\s+(?:(\d+)\s+)?(\S.*?)\s*$")
GROUPS: Final = ("interpreter", "libc", "kernel", "native")
# the load's process names, by the command line that started them
_ROLES: Final = (("gateways", "services.cli gateway"), ("views", "services.cli worker views"),
                 ("directory", "services.cli worker directory"), ("redis", "redis-server"))


def group_of(dso: str) -> str:
    """Which of ``GROUPS`` a shared object's samples belong to."""
    if dso.startswith("[kernel") or dso in ("[vdso]", "[vsyscall]"):
        return "kernel"
    if dso.startswith("libpython"):
        return "interpreter"
    if dso.startswith("libc.so") or dso.startswith("libc-"):
        return "libc"
    module = dso.split(".", 1)[0]
    if ".cpython-" in dso and module in _CPYTHON_MODULES:
        return "interpreter"
    return "native"


def shares(report: str) -> dict[str, float]:
    """The share (0..1) of each group in a ``perf report --stdio --sort dso`` text; a
    report without a sample gives an empty dict."""
    found = dict.fromkeys(GROUPS, 0.0)
    seen = False
    for line in report.splitlines():
        if line.startswith("#"):
            continue
        matched = _REPORT_LINE.match(line)
        if matched is None:
            continue
        found[group_of(matched.group(3))] += float(matched.group(1)) / 100
        seen = True
    return found if seen else {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench native")
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--gateways", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=30.0, help="how long the tables play")
    parser.add_argument("--sample-seconds", type=float, default=10.0, help="how long each process is sampled")
    parser.add_argument("--frequency", type=int, default=499, help="perf samples a second")
    parser.add_argument("--no-deflate", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not 0 < args.sample_seconds <= args.seconds / 2:
        parser.error("--sample-seconds must be positive and at most half of --seconds")
    perf = shutil.which("perf")
    if perf is None:
        print("mighty bench native: needs perf (Debian's linux-perf)", file=sys.stderr)
        return 2
    load = [sys.executable, "-m", "services.cli", "bench", "load", "--json", "--tables", str(args.tables),
            "--gateways", str(args.gateways), "--seconds", str(args.seconds)]
    if args.no_deflate:
        load.append("--no-deflate")
    with tempfile.TemporaryDirectory(prefix="mighty-native-") as tmp, \
            subprocess.Popen(load, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as bench:
        roles = _wait_for_roles(bench.pid, args.gateways)
        time.sleep(args.seconds / 3)  # the tables seated and playing: their own pace, not the start
        recorders = {(role, pid): _record(perf, pid, Path(tmp) / f"{pid}.data", args)
                     for role, pids in roles.items() for pid in pids}
        for recorder in recorders.values():
            recorder.wait()
        out, _ = bench.communicate()
        reports = {key: _report(perf, Path(tmp) / f"{key[1]}.data") for key in recorders}
    lines = out.decode().strip().splitlines()
    if bench.returncode != 0 or not lines:
        print(f"mighty bench native: the load run failed (exit {bench.returncode})", file=sys.stderr)
        return 1
    result = _result(msgspec.json.decode(lines[-1]), reports)
    if not result["processes"]:
        print("mighty bench native: perf recorded no samples (is kernel.perf_event_paranoid above 2?)",
              file=sys.stderr)
        return 2
    print(msgspec.json.encode(result).decode() if args.json else msgspec.json.format(msgspec.json.encode(result)).decode())
    return 0


def _wait_for_roles(root: int, gateways: int, timeout_s: float = 90.0) -> dict[str, list[int]]:
    """The server processes under the load run ``root``, by role, once all are up."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found: dict[str, list[int]] = {role: [] for role, _ in _ROLES}
        for pid, command in _descendants(root):
            for role, marker in _ROLES:
                if marker in command:
                    found[role].append(pid)
                    break
        if len(found["gateways"]) == gateways and found["views"] and found["directory"]:
            if not found["redis"]:
                found.pop("redis")  # REDIS_URL: a Redis not of this run, not sampled
            return found
        time.sleep(0.3)
    raise RuntimeError("the load run's server processes never all started")


def _descendants(root: int) -> list[tuple[int, str]]:
    """Every process under ``root``, with its command line."""
    return [(pid, command_of(pid)) for pid in sorted(descendants_of(root))]


def _record(perf: str, pid: int, data: Path, args: argparse.Namespace) -> subprocess.Popen[bytes]:
    return subprocess.Popen([perf, "record", "-F", str(args.frequency), "-p", str(pid), "-o", str(data),
                             "--", "sleep", str(args.sample_seconds)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _report(perf: str, data: Path) -> str:
    if not data.exists():
        return ""
    done = subprocess.run([perf, "report", "-i", str(data), "--stdio", "--no-children", "--sort", "dso", "-n"],
                          capture_output=True, timeout=120, check=False)
    return done.stdout.decode(errors="replace")


def _samples(report: str) -> int:
    """The report's samples: the sum of its lines' counts (``-n``), else its header's
    round figure ("# Samples: 4K")."""
    counted = [int(m.group(2)) for line in report.splitlines()
               if not line.startswith("#") and (m := _REPORT_LINE.match(line)) and m.group(2)]
    if counted:
        return sum(counted)
    matched = re.search(r"^# Samples: (\d+)([KM]?)", report, re.MULTILINE)
    if matched is None:
        return 0
    return int(matched.group(1)) * {"": 1, "K": 1000, "M": 1_000_000}[matched.group(2)]


def _result(load: dict[str, Any], reports: dict[tuple[str, int], str]) -> dict[str, Any]:
    per_command: dict[str, int] = load.get("cpu_us_per_command") or {}
    cpu_us = {"gateways": sum(v for k, v in per_command.items() if k.startswith("gateway")),
              "views": per_command.get("views", 0), "directory": per_command.get("directory", 0),
              "redis": per_command.get("redis", 0)}
    processes: dict[str, Any] = {}
    for role in cpu_us:
        weighted = dict.fromkeys(GROUPS, 0.0)
        samples = 0
        for (name, _), report in reports.items():
            if name != role:
                continue
            count, found = _samples(report), shares(report)
            samples += count
            for group, share in found.items():
                weighted[group] += share * count
        if not samples:
            continue
        share_of = {group: weighted[group] / samples for group in GROUPS}
        processes[role] = {
            "cpu_us_per_command": cpu_us[role], "samples": samples,
            "shares": {group: round(share, 4) for group, share in share_of.items()},
            "us_per_command": {group: round(share * cpu_us[role], 1) for group, share in share_of.items()},
        }
    server = sum(cpu_us[role] for role in processes)
    spent = {group: sum(p["us_per_command"][group] for p in processes.values()) for group in GROUPS}
    return {
        "load": {key: load.get(key) for key in ("commands_per_s", "p50_ms", "p99_ms", "errors", "tables",
                                                "gateways", "deflate", "commands", "seconds",
                                                "cpu_us_per_command", "load_avg_1m")},
        "processes": processes,
        "server_us_per_command": server,
        "interpreter_us": round(spent["interpreter"], 1),
        "outside_us": round(spent["libc"] + spent["kernel"] + spent["native"], 1),
        "outside_without_libc_us": round(spent["kernel"] + spent["native"], 1),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }

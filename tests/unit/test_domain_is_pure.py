"""docs/architecture.md, "Layers": ``domain/`` and ``projections/`` know nothing of I/O, time or randomness,
so every hand replays the same anywhere. Proved by reading the imports of every module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PURE_PACKAGES = ("domain", "projections")
FORBIDDEN = frozenset({
    "redis", "structlog", "random", "time", "uuid", "secrets", "socket", "os", "datetime",
    "litestar", "fakeredis", "asyncio", "subprocess", "threading", "services",
})
MODULES = sorted(p for package in PURE_PACKAGES for p in (ROOT / package).rglob("*.py"))


def imported_roots(source: str) -> set[str]:
    """The top-level package of every import, wherever it stands in the module."""
    roots: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "__import__" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            roots.add(node.args[0].value.split(".")[0])
    return roots


def test_there_are_modules_to_check() -> None:
    assert any(p.parent.name == "domain" for p in MODULES)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_pure_module_imports_no_io_clock_or_randomness(path: Path) -> None:
    bad = imported_roots(path.read_text()) & FORBIDDEN
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_the_scan_finds_imports_in_every_form() -> None:
    source = "import os.path\nfrom random import choice\ndef f():\n    import time\n__import__('uuid')\n"
    assert imported_roots(source) == {"os", "random", "time", "uuid"}
    assert imported_roots("from . import cards\nfrom domain.mighty.cards import SUITS\n") == {"domain"}

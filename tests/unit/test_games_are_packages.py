"""Games as packages: what differs per game is a member of the ``Game`` protocol
(``domain/games.py``), so nothing outside a game's package names its modules but the one
registry (``domain/registry.py``), and no game borrows from another. Proved by reading
the imports of every module of ``domain/``, ``projections/``, ``services/`` and ``bench/``
(tests may import a game's package)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GAME_PACKAGES = ("domain.mighty", "domain.mitigati")
REGISTRY = "domain.registry"
CHECKED = ("domain", "projections", "services", "bench")
MODULES = sorted(p for package in CHECKED for p in (ROOT / package).rglob("*.py"))
TYPED_STRICTLY = ("domain", "projections")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, module: str, *, is_package: bool = False) -> set[str]:
    """Every module an import names, wherever it stands: ``from a import b`` names
    ``a`` and ``a.b`` (``b`` may be a module); relative imports are resolved."""
    package = module.split(".") if is_package else module.split(".")[:-1]  # where `.` points
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                stem = ".".join(package[:len(package) - node.level + 1])
                base = f"{stem}.{base}" if base else stem
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def game_of_module(module: str) -> str | None:
    return next((g for g in GAME_PACKAGES if module == g or module.startswith(g + ".")), None)


def game_imports(source: str, module: str, *, is_package: bool = False) -> set[str]:
    """The game packages a module imports, other than its own."""
    own = game_of_module(module)
    names = imported_modules(source, module, is_package=is_package)
    return {g for name in names if (g := game_of_module(name)) and g != own}


def test_there_are_modules_of_every_layer_to_check() -> None:
    names = {module_name(p) for p in MODULES}
    assert {"domain.table", "domain.codec", REGISTRY, "projections.ledger", "bench.domain"} <= names
    assert any(n.startswith("services.audit.") for n in names)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_registry_and_a_games_own_package_import_it(path: Path) -> None:
    module = module_name(path)
    if module == REGISTRY:
        return
    named = game_imports(path.read_text(), module, is_package=path.name == "__init__.py")
    assert not named, f"{module} imports {sorted(named)}: ask the Game protocol (domain/games.py) instead"


@pytest.mark.parametrize("path", [p for p in MODULES if p.relative_to(ROOT).parts[0] in TYPED_STRICTLY],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_a_strictly_typed_module_silences_no_type_error(path: Path) -> None:
    lines = [n for n, line in enumerate(path.read_text().splitlines(), start=1) if "type: ignore" in line]
    assert not lines, f"{path.relative_to(ROOT)} has `type: ignore` on lines {lines}"


def test_the_scan_sees_a_game_imported_in_every_form() -> None:
    for source in ("from domain.mighty.rules import RuleSet\n", "import domain.mitigati.cards\n",
                   "from domain import mighty\n", "def f():\n    from domain.mitigati import legal\n"):
        assert game_imports(source, "domain.table"), source
    assert game_imports("from ..mitigati import cards\n", "domain.mighty.legal") == {"domain.mitigati"}
    assert not game_imports("from domain.mighty.cards import SUITS\nfrom . import hand\n", "domain.mighty.legal")
    assert not game_imports("from domain.games import Game\nfrom domain import registry\n", "domain.table")
    assert game_imports("from .. import mitigati\n", "domain.mighty", is_package=True) == {"domain.mitigati"}


def test_every_game_package_supplies_its_presentation_in_a_module_of_its_own() -> None:
    """A game's presentation (``domain/presentation.py``: its catalogue, labels, hand
    order) is its package's ``presentation.py``, and the catalogues together name every
    game ``CreateTable`` takes, each once."""
    from domain.registry import GAMES, variants

    named: list[str] = []
    for game in GAMES.values():
        package = type(game).__module__.rsplit(".", 1)[0]
        assert package in GAME_PACKAGES
        assert type(game.presentation).__module__ == f"{package}.presentation"
        assert (ROOT / package.replace(".", "/") / "presentation.py").is_file()
        entries = game.presentation.catalogue()
        assert entries and all(entry.family == game.name for entry in entries)
        named.extend(entry.game for entry in entries)
    assert sorted(named) == sorted(variants())


# One layout for every game package (docs/architecture.md, "Games"): each part of the
# ``Game`` protocol in the module of that name, so a new game copies a folder.
LAYOUT = {
    "game": "Game",  # the adapter the registry lists: every part below, bound
    "rules": "RuleBook",
    "decider": "Decider",
    "views": "Views",
    "handfile": "Audit",
    "ledger": "Ledgers",
    "bots": "Players",
    "presentation": "Shown",
}
SHARED_MODULES = ("cards", "commands", "events", "state", "legal", "play", "scoring")


def test_every_game_package_has_the_one_layout() -> None:
    """Every package holds a module per part of the protocol, and the modules both
    packages name their rules' pieces by (cards, commands, events, state, legal, play,
    scoring); whatever else a package holds is one rules section of its own game
    (Mighty's bidding and exchange, Mitigati's bargaining, declarations and discard)."""
    for package in GAME_PACKAGES:
        folder = ROOT / package.replace(".", "/")
        for module in (*LAYOUT, *SHARED_MODULES):
            assert (folder / f"{module}.py").is_file() or (folder / module / "__init__.py").is_file(), \
                f"{package} has no {module}"


def test_the_game_protocol_is_its_parts_and_each_member_belongs_to_one_part() -> None:
    import domain.games as games

    parts = [getattr(games, name) for name in LAYOUT.values() if name != "Game"]
    members = [set(vars(part)) - set(vars(object)) for part in parts]
    own = [{m for m in found if not m.startswith("_")} for found in members]
    assert all(own), "a part without a member"
    for i, first in enumerate(own):
        for second in own[i + 1:]:
            assert not first & second, first & second
    assert set(games.Game.__mro__) >= set(parts)
    game_members = {m for m in vars(games.Game) if not m.startswith("_")}
    assert not game_members, f"Game declares members of its own: {game_members}"


def test_a_game_is_found_by_each_of_its_variants_and_its_own_name() -> None:
    from domain.registry import GAMES, game_named, variants

    for game in GAMES.values():
        assert game.variants and all(game_named(name) is game for name in (game.name, *game.variants))
    assert list(variants()) == [name for game in GAMES.values() for name in game.variants]

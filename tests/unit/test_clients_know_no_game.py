"""Both clients know no game (docs/api.md, "Games, labels and languages"): what they show
of a game comes from the server (the catalogue ``GET /api/v1/games``, a view's ``legal``
labels, a replay step's ``label``), so a client's source names no game, asks its
catalogs for none of a game's own words, picks no picture by a suit's English name, and
holds no card's code nor ranks in an order of its own (a hand is sorted by the catalogue).

Read from the sources of ``clients/web/js`` and ``clients/terminal``: string literals
(JavaScript's quotes and template literals; Python's string constants) and the keys the
clients ask their catalogs for (``t("…")``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from domain.registry import GAMES, variants
from services.gateway import labels

ROOT = Path(__file__).resolve().parents[2]
WEB = sorted((ROOT / "clients" / "web" / "js").glob("*.js"))
TERMINAL = sorted((ROOT / "clients" / "terminal").glob("*.py"))
SOURCES = WEB + TERMINAL

# a JavaScript string: '…', "…" or `…` (a template literal's ${…} kept as text)
JS_STRING = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`""")
JS_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# a catalog key asked for: t("key"), t(`key.${x}`), t('key')
ASKED = re.compile(r"""\bt\(\s*(['"`])([^'"`]*)\1?""")


def _js_strings(source: str) -> list[str]:
    # comments go first (a URL's // inside a string is rare in these sources and kept by
    # taking strings before comments where they start earlier)
    found: list[str] = []
    position = 0
    while position < len(source):
        string = JS_STRING.search(source, position)
        comment = JS_COMMENT.search(source, position)
        if string is None:
            break
        if comment is not None and comment.start() < string.start():
            position = comment.end()
            continue
        found.append(string.group()[1:-1])
        position = string.end()
    return found


def strings_of(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        tree = ast.parse(source)
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        return [node.value for node in ast.walk(tree)
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]
    return _js_strings(source)


def strings_of_python(source: str) -> list[str]:
    """The string constants of Python ``source`` (a file's are ``strings_of``'s)."""
    return [node.value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def asked_keys(path: Path) -> list[str]:
    """The keys (or their constant beginnings) a client asks its catalogs for."""
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return [str(call.args[0].value) if isinstance(call.args[0], ast.Constant) else
                "".join(str(v.value) for v in call.args[0].values if isinstance(v, ast.Constant))
                for call in ast.walk(ast.parse(source))
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "t"
                and call.args and isinstance(call.args[0], ast.Constant | ast.JoinedStr)]
    return [match.group(2) for match in ASKED.finditer(JS_COMMENT.sub("", source))]


FAMILIES = tuple(GAMES)  # a game's own words are its family's keys: "mighty.…", "mitigati.…"
VARIANTS = frozenset(variants())
SUIT_NAMES = frozenset(s.label.lower() for g in labels.games("en").games for s in g.suits)
CARDS = frozenset(c.card for g in labels.games("en").games for c in g.cards)
# each suit's ranks in the catalogue's order (its ``order``), per game: a client that
# spells three of them in a row, either way round, orders cards by a table of its own
RANK_RUNS = frozenset(
    tuple(run) for g in labels.games("en").games for suit in {c.suit for c in g.cards if c.suit}
    for ranks in [[c.rank for c in sorted(g.cards, key=lambda c: c.order) if c.suit == suit]]
    for ordered in (ranks, ranks[::-1]) for run in zip(ordered, ordered[1:], ordered[2:], strict=False))


def rank_runs(strings: list[str]) -> list[tuple[str, str, str]]:
    """Three ranks of a suit in the catalogue's order: three strings in a row, or the
    letters of one string ("AKQ"; not three digits, which "0123456789" holds too)."""
    found = [run for run in zip(strings, strings[1:], strings[2:], strict=False) if run in RANK_RUNS]
    return found + [run for text in strings for run in zip(text, text[1:], text[2:], strict=False)
                    if run in RANK_RUNS and not "".join(run).isdigit()]  # a digit run is a number's


def test_the_sources_and_the_names_to_look_for_are_there() -> None:
    assert len(WEB) > 10 and len(TERMINAL) > 10
    assert {"mighty", "mitigati"} <= set(FAMILIES)
    assert {"mighty-5", "mitigati"} <= VARIANTS
    assert {"spades", "coins", "no trump"} <= SUIT_NAMES
    assert {"AS", "JK", "T21", "FOOL"} <= CARDS
    assert {("A", "K", "Q"), ("2", "3", "4"), ("K", "Q", "N")} <= RANK_RUNS


def test_the_scanners_find_what_they_look_for() -> None:
    """What the tests below would catch, shown on a line of each language."""
    assert _js_strings('f(list, value = "mighty-5", `x${y}`); // "no"\n') == ["mighty-5", "x${y}"]
    assert [m.group(2) for m in ASKED.finditer('t(`mitigati.combination.${c}`)')] == ["mitigati.combination.${c}"]
    tree = ast.parse('GLYPHS = {"spades": "♠"}\nt(f"mitigati.x.{c}")\n')
    assert any(isinstance(n, ast.Constant) and n.value == "spades" for n in ast.walk(tree))
    assert rank_runs(_js_strings('const RANKS = ["A", "K", "Q", "J"];')) == [("A", "K", "Q"), ("K", "Q", "J")]
    assert rank_runs(strings_of_python('ORDER = "23456789TJQKA"\n')) and not rank_runs(["0123456789", "A", "Q"])


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_client_asks_its_catalogs_for_a_games_own_words(path: Path) -> None:
    """A combination, a suit, a phase or a command is said by the server; a client's own
    words are its ``web.…`` or ``terminal.…`` keys."""
    for key in asked_keys(path):
        assert not key.startswith(tuple(f"{family}." for family in FAMILIES)), f"{path.name} asks for {key!r}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_client_names_a_game_or_a_suit(path: Path) -> None:
    """No game's name (a default game is the catalogue's first) and no suit's English
    name (a suit's picture is the catalogue's ``symbol``) as a string of a client."""
    for text in strings_of(path):
        assert text not in VARIANTS, f"{path.name} names the game {text!r}"
        assert text.lower() not in SUIT_NAMES, f"{path.name} names the suit {text!r}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_client_names_a_card_or_orders_ranks_by_a_table_of_its_own(path: Path) -> None:
    """A card's face, picture and place in a hand are the catalogue's (``cards``: its
    ``label``, ``symbol`` and ``order``; a view's ``hand_order`` where a trump decides):
    no client source holds a card's code or three ranks of a suit in their order."""
    strings = strings_of(path)
    assert not CARDS & set(strings), f"{path.name} names the cards {sorted(CARDS & set(strings))}"
    assert not rank_runs(strings), f"{path.name} orders ranks itself: {rank_runs(strings)}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_client_names_a_game_family_in_a_path_or_a_key(path: Path) -> None:
    """A family's rules guide is the catalogue's ``guide`` (its file and title): no client
    links ``#/rules/mighty`` or asks for a family's title by a key of its own."""
    for text in strings_of(path) + asked_keys(path):
        for family in FAMILIES:
            assert not re.search(rf"[/.#]{family}(?![\w-])", text), f"{path.name} names the family {family!r} in {text!r}"


def test_every_game_names_a_rules_guide_that_every_language_has() -> None:
    guides = ROOT / "docs" / "rules" / "guides"
    for lang in ("ko", "en", "fi", "ru", "ja", "it"):
        named = {g.guide.name: g.guide.title for g in labels.games(lang).games if g.guide is not None}
        assert set(named) == set(FAMILIES), lang
        for name, title in named.items():
            assert (guides / lang / f"{name}.md").is_file() and title, (lang, name)

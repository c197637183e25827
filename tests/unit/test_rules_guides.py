"""The players' rules guides (docs/rules/guides/<lang>/, docs/i18n.md "Rules guides"):
every language has both games, with the same numbered § sections as the others, none
empty, written with that language's own words for the game (taken from the rule texts
the service was built from)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from services.i18n.catalogs import LANGS

GUIDES = Path(__file__).resolve().parents[2] / "docs" / "rules" / "guides"
GAMES = ("mighty", "mitigati")
SECTION = re.compile(r"^## §(\d+)\. \S", re.MULTILINE)

# each language's own words for the game (the seeds' rule texts, docs/i18n.md)
WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "ko": {"mighty": ("마이티", "조커", "프렌드", "주공", "기루다", "노기루다"),
           "mitigati": ("미티가티", "바가토", "광대")},
    "en": {"mighty": ("Mighty", "Joker", "friend", "declarer", "kitty", "Ripper"),
           "mitigati": ("Mitigati", "Fool", "Bagatto", "honours")},
    "fi": {"mighty": ("Mahtava", "Jokeri", "ystävä", "pelinviejä", "valtti"),
           "mitigati": ("Mitigati", "Narri", "Tarokit", "kaupankäynti", "Pagatto", "valtti")},
    "ru": {"mighty": ("Всемогущий", "джокер", "партнёр", "козыр", "прикуп"),
           "mitigati": ("Митигати", "Шут", "козыр")},
    "ja": {"mighty": ("マイティ", "ジョーカー", "パートナー", "落札者", "切り札"),
           "mitigati": ("ミティガティ", "切り札", "愚者")},
    "it": {"mighty": ("Mighty", "Jolly", "amico", "dichiarante", "briscola", "monte"),
           "mitigati": ("Mitigati", "Matto", "Bagatto", "tarocchi", "onori")},
}


def _sections(text: str) -> dict[int, str]:
    """Each § section's number and its body (up to the next § section)."""
    marks = list(SECTION.finditer(text))
    return {int(m.group(1)): text[m.end():marks[i + 1].start() if i + 1 < len(marks) else len(text)]
            for i, m in enumerate(marks)}


def test_the_word_table_covers_every_language() -> None:
    assert sorted(WORDS) == sorted(LANGS)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("game", GAMES)
def test_every_language_has_the_guide_with_the_english_guides_sections(lang: str, game: str) -> None:
    english = _sections((GUIDES / "en" / f"{game}.md").read_text(encoding="utf-8"))
    guide = GUIDES / lang / f"{game}.md"
    assert guide.is_file(), f"{guide} is missing"
    sections = _sections(guide.read_text(encoding="utf-8"))
    assert list(sections) == list(english), f"{lang}/{game}.md has § {list(sections)}, English has {list(english)}"
    assert list(sections) == list(range(1, len(sections) + 1)), "sections are numbered 1, 2, 3 …"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("game", GAMES)
def test_no_guide_section_is_empty(lang: str, game: str) -> None:
    for number, body in _sections((GUIDES / lang / f"{game}.md").read_text(encoding="utf-8")).items():
        assert len(body.strip()) > 40, f"{lang}/{game}.md §{number} is empty"


def test_the_mighty_guides_follow_the_specifications_numbering() -> None:
    spec = (GUIDES.parent / "mighty.md").read_text(encoding="utf-8")
    numbered = [int(n) for n in re.findall(r"^## (\d+)\. ", spec, re.MULTILINE)]
    english = _sections((GUIDES / "en" / "mighty.md").read_text(encoding="utf-8"))
    assert list(english) == numbered


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("game", GAMES)
def test_each_guide_speaks_its_languages_words_for_the_game(lang: str, game: str) -> None:
    text = (GUIDES / lang / f"{game}.md").read_text(encoding="utf-8")
    missing = [word for word in WORDS[lang][game] if word.casefold() not in text.casefold()]
    assert not missing, f"{lang}/{game}.md lacks {missing}"

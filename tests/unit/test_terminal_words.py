"""The terminal client's own words come from the PO catalogs (docs/i18n.md, "The
terminal client"), in the language of ``--lang`` (else the player's setting, else
English): every key it asks for is in the catalogs, and a screen drawn in Korean or
Finnish says its words in that language."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from clients.terminal import board, catalog
from clients.terminal.cards import register
from clients.terminal.catalog import t, use
from clients.terminal.dialogs import Seats
from clients.terminal.lobby import STATUSES
from services.i18n.catalogs import LANGS
from tests.unit.terminal_screens import table_screen
from tests.unit.terminal_tables import catalogue

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "terminal"
FIXTURES = Path(__file__).parent.parent / "fixtures" / "terminal"
KEY = re.compile(r"""["'](terminal\.[a-z_.]+)["']""")
# the keys the client makes from a name (``t(f"terminal.seats.{c}")``)
MADE = [*(f"terminal.seats.{c}" for c in board.SEAT_COLUMNS),
        *(f"terminal.lobby.col.{c}" for c in ("table", "game", "status", "seats", "players", "hands")),
        *(f"terminal.bargain.{a}" for a in ("pass", "continue", "pay", "sell")),
        *(f"terminal.friend.{k}" for k in ("none", "first_trick")),
        *(f"terminal.table.{s}" for s in ("connected", "reconnecting")),
        *(f"web.status.{s}" for s in STATUSES)]


@pytest.fixture(autouse=True)
def english_after() -> Iterator[None]:
    register(catalogue("en"))
    yield
    use("en")


def asked() -> set[str]:
    return {m for path in CLIENT.glob("*.py") for m in KEY.findall(path.read_text())} | set(MADE)


@pytest.mark.parametrize("lang", LANGS)
def test_every_word_the_client_asks_for_is_in_every_catalog(lang: str) -> None:
    keys = asked()
    assert len(keys) > 100
    texts = catalog.texts(lang)
    # a text with plural forms is there as its forms (``key#one`` … ``key#other``; that
    # each language has each of its forms, tests/unit/test_i18n.py holds)
    forms = {k.partition("#")[0] for k in texts if "#" in k}
    missing = sorted(k for k in keys if k not in texts and k not in forms)
    assert not missing, missing


def test_a_text_fills_its_fields_as_text_and_a_missing_key_says_itself() -> None:
    use("fi")
    assert t("terminal.status.to_act", name="[b]{x}[/b]") == "[b]{x}[/b] vuorossa"
    use("ja")
    assert t("terminal.status.hand", n=3) == "第3ハンド"
    assert t("terminal.no.such.key") == "terminal.no.such.key"
    assert use("xx") == "en" and t("terminal.status.your_turn") == "Your turn"


@pytest.mark.parametrize(("lang", "turn", "column"), [("ko", "당신 차례", "자리"), ("fi", "Sinun vuorosi", "Paikka"),
                                                      ("ru", "Ваш ход", "Место")])
def test_the_table_screen_speaks_the_readers_language(lang: str, turn: str, column: str) -> None:
    doc = json.loads((FIXTURES / "mighty5_play.json").read_text())
    view, names = doc["view"], [s["name"] for s in doc["table"]["seats"]]
    use(lang)
    register(catalogue(lang))

    async def draw() -> None:
        async with table_screen(view, names, (80, 24)) as (pilot, screen):
            status = board.status(view, names).plain
            assert turn in status and "Your turn" not in status
            header = screen.query_one(Seats).render_line(0).text
            assert column in header and "Seat" not in header
            assert t("terminal.prompt.play") in str(screen.query_one("#prompt").render())
            footer = " ".join(b.description for bs in screen._bindings.key_to_bindings.values() for b in bs)
            assert t("terminal.key.commands") in footer and "terminal.key" not in footer

    asyncio.run(draw())


def test_the_declarer_sides_points_take_each_languages_plural_form() -> None:
    said = {lang: [(use(lang), t("terminal.status.side_points", count=n, contract=13))[1] for n in (1, 3, 5, 21)]
            for lang in ("en", "ru")}
    assert said["en"] == ["Declarer's side: 1 point of 13", "Declarer's side: 3 points of 13",
                          "Declarer's side: 5 points of 13", "Declarer's side: 21 points of 13"]
    assert said["ru"] == ["Сторона победителя торгов: 1 очко из 13", "Сторона победителя торгов: 3 очка из 13",
                          "Сторона победителя торгов: 5 очков из 13", "Сторона победителя торгов: 21 очко из 13"]

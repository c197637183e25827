"""The web client in the reader's language (docs/i18n.md), in a real browser against the
real service: a person picks Korean (then Japanese) in the language picker and plays a
whole hand by clicking, every word on the table in that language, the server's labels
and the client's own; the choice is kept as the player's setting. Then the same table,
mid-trick, in each of the six languages: ``table-<lang>.png`` (``docs/screenshots/``
with ``MIGHTY_SCREENSHOTS=docs/screenshots``)."""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_web_client import Api, a_random_command, page_caught_up, play_my_turn

pytestmark = pytest.mark.e2e

SCRIPT = {"ko": re.compile(r"[\uac00-\ud7a3]"), "ja": re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]"),
          "ru": re.compile(r"[\u0400-\u04ff]")}


class ReaderApi(Api):
    """The test's own HTTP client, reading views in the page's language (the call
    choices the page shows are the server's labels in it)."""

    def __init__(self, base: str, lang: str) -> None:
        super().__init__(base)
        self.lang = lang

    def view(self, table: str, token: str) -> dict[str, Any]:
        answer = self.http.get(f"/tables/{table}/view", params={"lang": self.lang},
                               headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.text
        view: dict[str, Any] = answer.json()
        return view


def _play_a_hand_in(page: Page, service: str, lang: str, shots: Path) -> None:
    rng = random.Random(lang)
    api = ReaderApi(service, lang)
    others = [api.player(n) for n in ("Bo", "Cy", "Di", "Ed")]
    page.goto(f"{service}/")
    page.select_option("select[name=lang]", lang)  # the picker, before logging in
    expect(page.locator("html")).to_have_attribute("lang", lang)
    title = page.locator(".login h2").first  # the guest's form, before the accounts'
    expect(title).not_to_have_text("Play as a guest")
    assert SCRIPT[lang].search(title.inner_text()), title.inner_text()
    page.fill("input[name=name]", "Ana")
    page.click("[data-action=login]")
    expect(page.locator("[data-action=quickplay]")).to_be_visible()
    me: str = page.evaluate("JSON.parse(localStorage.getItem('mighty.session')).token")
    # the choice made before logging in became the player's setting
    deadline = time.monotonic() + 10
    while api.http.get("/players/me", headers={"Authorization": f"Bearer {me}"}).json()["lang"] != lang:
        assert time.monotonic() < deadline, "the picker's choice was not kept as the player's lang"
        time.sleep(0.1)

    page.fill("input[name=hands]", "1")
    for seat in range(1, 5):  # the form offers bots in the other seats: people sit there here
        page.select_option(f"select[name=bot-{seat}]", "")
    page.click("[data-action=create_table]")
    page.wait_for_url(re.compile(r"#/t/"))
    table = page.url.split("#/t/")[1]
    for seat, token in enumerate(others, start=1):
        joined = api.http.post(f"/tables/{table}/join", json={"seat": seat}, headers={"Authorization": f"Bearer {token}"})
        assert joined.status_code == 200, joined.text
    tokens = [me, *others]

    checked_words = False
    # the screenshot of a turn in the play: the one with the most cards on the trick, at
    # most four (the deal is the server's: a seat may lead or follow the leader every trick)
    shot = -1
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        view = api.view(table, me)
        if view["status"] == "closed":
            break
        seat = view["to_act"]
        if seat is None:
            time.sleep(0.05)
            continue
        if seat != 0:
            theirs = api.view(table, tokens[seat])
            if theirs["legal"]:
                api.command(table, tokens[seat], a_random_command(theirs, rng))
            continue
        page_caught_up(page, view["version"])
        if not checked_words:
            status = page.locator(".status-line .whose").inner_text()
            assert SCRIPT[lang].search(status), status  # "your turn" in the language
            for entry in view["legal"]:
                assert SCRIPT[lang].search(entry["label"]) or entry["label"][0].isdigit(), entry
            checked_words = True
        trick = view.get("trick")
        on_trick = len((trick or {}).get("cards") or ())
        if view["phase"] == "play" and on_trick > shot:
            shot = on_trick
            page.screenshot(path=str(shots / f"play-{lang}.png"))
        play_my_turn(page, view, rng)
        answer_deadline = time.monotonic() + 10
        while api.view(table, me)["version"] == view["version"]:
            assert time.monotonic() < answer_deadline, "the click sent nothing"
            time.sleep(0.05)
    else:
        raise AssertionError("the hand did not end in time")

    final = api.view(table, me)
    page_caught_up(page, final["version"])
    result = page.locator("[data-result]").first
    expect(result).to_be_visible()
    headline = result.locator("h3").inner_text()
    assert SCRIPT[lang].search(headline), headline
    expect(page.locator("[data-ledger='1']")).to_be_visible()
    assert checked_words and shot >= 0


def test_a_person_picks_korean_and_plays_a_whole_hand_in_korean(page: Page, service: str, shots: Path) -> None:
    _play_a_hand_in(page, service, "ko", shots)


def test_a_person_picks_japanese_and_plays_a_whole_hand_in_japanese(page: Page, service: str, shots: Path) -> None:
    _play_a_hand_in(page, service, "ja", shots)


def test_a_refusal_and_the_lobby_follow_the_picker_and_the_choice_survives_a_reload(page: Page, service: str) -> None:
    page.goto(f"{service}/")
    page.select_option("select[name=lang]", "ru")
    expect(page.locator(".login h2").first).to_have_text("Играть гостем")  # the lobby drawn again in Russian
    page.fill("input[name=name]", "Ана")
    page.click("[data-action=login]")
    expect(page.locator("[data-action=quickplay]")).to_be_visible()
    page.reload()
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    expect(page.locator("select[name=lang]")).to_have_value("ru")
    assert SCRIPT["ru"].search(page.locator(".quick h2").inner_text())
    # the games' names come from the server in Russian
    expect(page.locator(".quick select[name=game] option").first).to_have_text("Всемогущий (5 игроков)")
    # a table that is not there: the API's refusal, in Russian, shown as the toast
    page.goto(f"{service}/#/r/t-no-such-table/1")
    expect(page.locator(".panel")).to_contain_text("Такого стола нет")


def test_the_rules_page_in_korean_shows_the_korean_guides(page: Page, service: str) -> None:
    page.goto(f"{service}/")
    page.select_option("select[name=lang]", "ko")
    expect(page.locator("html")).to_have_attribute("lang", "ko")
    page.click(".hero a[href='#/rules']")  # the lobby's "how to play": the catalogue's first guide
    article = page.locator("article.rules")
    expect(article.locator("h1")).to_have_text("마이티: 게임 방법")  # docs/rules/guides/ko/mighty.md
    expect(article.locator("h2").nth(4)).to_have_text("§5. 플레이")  # numbered as the specification
    expect(article).to_contain_text("주공")
    # the source link still points at the specification, in English
    expect(page.locator(".rules-nav a[href='/rules/mighty.md']")).to_be_visible()
    # the guides and their titles are the catalogue's (each game's `guide`), in Korean
    expect(page.locator(".rules-nav a[href='#/rules/mighty']")).to_have_text("마이티")
    page.click(".rules-nav a[href='#/rules/mitigati']:has-text('미티가티')")
    expect(article.locator("h1")).to_have_text("미티가티: 게임 방법")
    expect(article).to_contain_text("바가토")


def _seat_mid_trick(service: str) -> tuple[str, dict[str, str]]:
    """A table of five API players played on to a trick of two cards or more; the first
    player's session as the page keeps it."""
    rng = random.Random(5)
    api = Api(service)
    made = [api.http.post("/players", json={"name": n}).json() for n in ("Ana", "Bo", "Cy", "Di", "Ed")]
    tokens = [m["token"] for m in made]
    created = api.http.post("/tables", json={"game": "mighty-5", "name": "Mighty", "seat": 0, "hands": 2},
                            headers={"Authorization": f"Bearer {tokens[0]}"})
    table = created.json()["table"]
    for seat, token in enumerate(tokens[1:], start=1):
        api.http.post(f"/tables/{table}/join", json={"seat": seat}, headers={"Authorization": f"Bearer {token}"})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        view = api.view(table, tokens[0])
        trick = view.get("trick")
        if view["phase"] == "play" and trick and len(trick["cards"]) >= 2 and view["to_act"] == 0:
            return table, {"player": made[0]["player"], "name": "Ana", "token": tokens[0]}
        seat = view["to_act"]
        if seat is None:
            time.sleep(0.05)
            continue
        theirs = api.view(table, tokens[seat])
        bids = [c for c in theirs["legal"] if c["type"] == "bid"] if seat == 0 else []
        if bids:  # the others pass: seat 0 declares (else every hand is thrown in)
            api.command(table, tokens[seat], {k: v for k, v in bids[0].items() if k != "label"})
        elif theirs["legal"]:
            api.command(table, tokens[seat], a_random_command(theirs, rng))
    raise AssertionError("no trick of two cards in time")


def test_the_table_mid_trick_in_each_of_the_six_languages(page: Page, service: str, shots: Path) -> None:
    table, session = _seat_mid_trick(service)
    page.goto(f"{service}/")
    page.evaluate("s => localStorage.setItem('mighty.session', s)", json.dumps(session))
    texts: dict[str, str] = {}
    for lang in ("ko", "en", "fi", "ru", "ja", "it"):
        page.goto(f"{service}/#/")
        page.select_option("select[name=lang]", lang)
        expect(page.locator("html")).to_have_attribute("lang", lang)
        page.goto(f"{service}/#/t/{table}")
        expect(page.locator("[data-card]")).not_to_have_count(0, timeout=15000)
        expect(page.locator(".trick .card")).not_to_have_count(0)
        page.wait_for_timeout(300)  # the table's name and the seats' names arrive after the view
        texts[lang] = page.locator(".status-line").inner_text()
        page.screenshot(path=str(shots / f"table-{lang}.png"))
    assert len(set(texts.values())) == 6, texts  # "Your turn" six ways
    for lang, pattern in SCRIPT.items():
        assert pattern.search(texts[lang]), (lang, texts[lang])

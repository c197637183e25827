"""The web client as a person uses it, in a real browser against the real service.

The person (seat 0) plays by clicking. The other four seats are guest players, not bots
(the bot worker would choose its own moves, and this stack runs none), that this test
drives through the HTTP API with random legal commands; in the bidding they pass, so the
person wins the auction and goes through the kitty, the discard and the friend call.
"""

from __future__ import annotations

import random
import re
import secrets
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from domain.table import deal_commitment
from tests.fixtures.hostile_names import HOSTILE_NAMES, HOSTILE_TABLE_NAMES

pytestmark = pytest.mark.e2e


class Api:
    def __init__(self, base: str) -> None:
        self.http = httpx.Client(base_url=f"{base}/api/v1", timeout=15)
        self.sent = 0

    def player(self, name: str) -> str:
        made = self.http.post("/players", json={"name": name})
        assert made.status_code == 201, made.text
        token: str = made.json()["token"]
        return token

    def view(self, table: str, token: str) -> dict[str, Any]:
        answer = self.http.get(f"/tables/{table}/view", headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.text
        view: dict[str, Any] = answer.json()
        return view

    def command(self, table: str, token: str, command: dict[str, Any]) -> int:
        self.sent += 1
        answer = self.http.post(f"/tables/{table}/commands", json={"id": f"e2e-{self.sent}", "command": command},
                                headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.text
        version: int = answer.json()["version"]
        return version


def log_in(page: Page, base: str, name: str) -> str:
    page.goto(f"{base}/")
    page.fill("input[name=name]", name)
    page.click("[data-action=login]")
    expect(page.locator("[data-action=quickplay]")).to_be_visible()
    token: str = page.evaluate("JSON.parse(localStorage.getItem('mighty.session')).token")
    return token


def a_random_command(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A random legal command; in the bidding, a pass (the person is to win the auction)."""
    legal = view["legal"]
    passes = [c for c in legal if c["type"] == "pass"]
    command = dict(passes[0] if passes else rng.choice(legal))
    if command["type"] == "discard" and "count" in command:
        command = {"type": "discard", "cards": rng.sample(command["from"], command["count"])}
    return command


def page_caught_up(page: Page, version: int) -> None:
    expect(page.locator(f".table-page[data-version='{version}']")).to_have_count(1, timeout=15000)


def play_my_turn(page: Page, view: dict[str, Any], rng: random.Random) -> None:
    """What a person does with the view on the screen: the first legal control of the step."""
    types = {c["type"] for c in view["legal"]}
    if "bid" in types:
        page.select_option("select[name=points]", "13")
        page.click("[data-action=bid][data-trump=S]")
    elif "discard" in types:
        step = next(c for c in view["legal"] if c["type"] == "discard")
        for card in rng.sample(step["from"], step["count"]):
            page.click(f"[data-card='{card}']")
        page.click("[data-action=discard]")
    elif "call_friend" in types:
        # the picker: a call the rules name (the Mighty first) as a button; the button
        # that sends it is named by the server's label (docs/api.md, "Games, labels and
        # languages")
        call = page.locator(".named-calls [data-call]").first.get_attribute("data-call")
        page.click(f".named-calls [data-call='{call}']")
        label = next(c["label"] for c in view["legal"]
                     if c["type"] == "call_friend" and c["friend"] == call and not c.get("lead_suit"))
        expect(page.locator("[data-action=call_friend]")).to_have_text(label)
        page.click("[data-action=call_friend]")
    else:
        if view.get("hand_order"):  # the hand as the server orders it: the trump suit first
            shown = page.locator(".hand [data-card]").evaluate_all("els => els.map((e) => e.dataset.card)")
            assert shown == view["hand_order"], (shown, view["hand_order"])
        cards = page.locator("[data-card][data-legal]:not([disabled])")
        cards.nth(rng.randrange(cards.count())).click()
        chooser = page.locator("[data-action=play][data-suit], [data-action=play][data-joker-call]")
        if chooser.count():
            chooser.first.click()


def test_a_person_plays_a_whole_hand_by_clicking_reloads_midway_and_steps_its_replay(
        page: Page, service: str, shots: Path) -> None:
    rng = random.Random(11)
    api = Api(service)
    others = [api.player(n) for n in ("Bo", "Cy", "Di", "Ed")]
    me = log_in(page, service, "Ana")

    # the lobby: a new table of two hands, the person at seat 0, the rest for people
    # (the form offers bots in the other seats: each is set to "a person")
    page.fill("input[name=hands]", "2")
    for seat in range(1, 5):
        expect(page.locator(f"select[name=bot-{seat}]")).to_have_value("beginner")
        page.select_option(f"select[name=bot-{seat}]", "")
    page.click("[data-action=create_table]")
    page.wait_for_url(re.compile(r"#/t/"))
    table = page.url.split("#/t/")[1]
    expect(page.locator(".status-line")).to_contain_text("Waiting for players")
    for seat, token in enumerate(others, start=1):
        joined = api.http.post(f"/tables/{table}/join", json={"seat": seat}, headers={"Authorization": f"Bearer {token}"})
        assert joined.status_code == 200, joined.text
    tokens = [me, *others]

    refused_an_illegal_card = False
    reloaded = dropped = shot = False
    plays = 0
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
            if plays >= 3 and not dropped:
                # a dropped connection, at another seat's first turn after the third card
                # (the person may lead again at once, having won the trick)
                page.evaluate("window.mightyStream.drop()")
                dropped = True
            continue
        page_caught_up(page, view["version"])
        if view["phase"] == "play":
            legal = {c["card"] for c in view["legal"]}
            illegal = [c for c in view["hand"] if c not in legal]
            for card in view["hand"]:
                button = page.locator(f"[data-card='{card}']")
                if card in legal:
                    expect(button).to_have_attribute("data-legal", "")
                else:
                    expect(button).to_be_disabled()
            if illegal and not refused_an_illegal_card:
                page.locator(f"[data-card='{illegal[0]}']").click(force=True)
                time.sleep(0.3)
                assert api.view(table, me)["version"] == view["version"], "an illegal card was sent"
                refused_an_illegal_card = True
            trick = view["trick"]
            if not shot and trick and len(trick["cards"]) >= 2:
                page.screenshot(path=str(shots / "table.png"))  # mid-trick
                shot = True
            if plays == 4 and not reloaded:
                page.reload()  # mid-hand: the page comes back from its last version
                page_caught_up(page, view["version"])
                expect(page.locator("[data-card]")).to_have_count(len(view["hand"]))
                reloaded = True
            plays += 1
        play_my_turn(page, view, rng)
        answer_deadline = time.monotonic() + 10
        while api.view(table, me)["version"] == view["version"]:
            assert time.monotonic() < answer_deadline, "the click sent nothing"
            time.sleep(0.05)
    else:
        raise AssertionError("the hand did not end in time")

    assert plays == 20 and reloaded and dropped and refused_an_illegal_card
    final = api.view(table, me)
    page_caught_up(page, final["version"])
    result = page.locator("[data-result]").first
    expect(result).to_be_visible()
    taken = final["declarer_side_points"]
    expect(result).to_contain_text(f"{taken} point" if taken == 1 else f"{taken} points")  # CLDR: one, other
    expect(page.locator("[data-ledger='2']")).to_be_visible()
    page.screenshot(path=str(shots / "result.png"), full_page=True)

    # the replay viewer: step card by card as seat 0 saw the hand
    page.goto(f"{service}/#/r/{table}/1")
    page.select_option("select[data-replay=as]", "0")
    expect(page.locator("[data-step='0']")).to_be_visible()
    expect(page.locator(".replay-hand .card")).to_have_count(10)
    for _ in range(6):  # the auction (5 steps) and the discard: 10 cards again, the kitty's 3 in and out
        page.click("[data-replay=next]")
    # the step as the server labels it for seat 0: its own discard, card by card
    expect(page.locator("[data-step='6']")).to_contain_text("Ana: Discard ")
    page.keyboard.press("End")
    last = page.locator("[data-step]").get_attribute("data-step")
    page.keyboard.press("Home")
    expect(page.locator("[data-step='0']")).to_be_visible()
    page.click("[data-replay=last]")
    expect(page.locator(f"[data-step='{last}']")).to_contain_text(": Play the ")  # the last card, as labelled
    expect(page.locator("[data-result]")).to_be_visible()
    page.select_option("select[data-replay=as]", "audit")
    expect(page.locator(".all-hands .row")).to_have_count(5)
    page.click("[data-replay=next]")
    page.click("[data-replay=next]")
    page.screenshot(path=str(shots / "replay.png"), full_page=True)


def test_the_browser_reproduces_the_deal_commitment_and_catches_a_changed_deal(page: Page, service: str) -> None:
    """commit.js hashes the revealed order and salt with SubtleCrypto as the table does
    (domain.table.deal_commitment), and a changed salt or a card dealt elsewhere fails."""
    page.goto(f"{service}/")
    expect(page.locator("[data-action=login]")).to_be_visible()  # the page's catalog is loaded
    order = [f"{r}{s}" for s in "SHDC" for r in "23456789TJQKA"] + ["JK"]
    random.Random(3).shuffle(order)
    salt = secrets.token_hex(16)
    expected = deal_commitment(tuple(order), salt)
    dealt = [order[i * 10:(i + 1) * 10] for i in range(5)]
    checked = page.evaluate(
        """async ([order, salt, commitment, dealt]) => {
            const m = await import('/js/commit.js');
            const kitty = order.slice(50);
            const swapped = dealt.map((h) => [...h]);
            [swapped[0][0], swapped[1][0]] = [swapped[1][0], swapped[0][0]];
            return {
              computed: await m.commitmentOf(order, salt),
              good: (await m.checkDeal({order, salt, commitment, dealt, kitty})).ok,
              badSalt: (await m.checkDeal({order, salt: salt + 'x', commitment, dealt, kitty})).ok,
              badDeal: (await m.checkDeal({order, salt, commitment, dealt: swapped, kitty})).problems,
            };
        }""", [order, salt, expected, dealt])
    assert checked["computed"] == expected
    assert checked["good"] is True
    assert checked["badSalt"] is False
    assert checked["badDeal"] == ["seat 0 was not dealt order[0:10]", "seat 1 was not dealt order[10:20]"]


def test_quick_play_seats_the_person_at_a_mighty_5_table(page: Page, service: str, shots: Path) -> None:
    api = Api(service)
    waiting = api.player("Zoe")
    made = api.http.post("/tables", json={"game": "mighty-4", "name": "Four friends", "seat": 0},
                         headers={"Authorization": f"Bearer {waiting}"})
    assert made.status_code == 201, made.text
    me = log_in(page, service, "Ana")
    expect(page.locator(f"[data-table='{made.json()['table']}']")).to_contain_text("Four friends")
    # the games and their options as the server describes them (GET /api/v1/games)
    names = [g["name"] for g in api.http.get("/games").json()["games"]]
    expect(page.locator(".quick select[name=game] option")).to_have_text(names)
    score = page.locator(".create [data-option=score]")
    expect(score).to_have_value('"fixed"')
    expect(score.locator("option")).to_have_text(["fixed (default)", "pagat.com's", "penalty tally"])
    page.screenshot(path=str(shots / "lobby.png"))
    page.fill("input[name=wait_seconds]", "0")
    page.click("[data-action=quickplay]")
    page.wait_for_url(re.compile(r"#/t/"), timeout=20000)
    table = page.url.split("#/t/")[1]
    view = api.view(table, me)
    assert view["game"] == "mighty-5" and view["seat"] is not None
    expect(page.locator("[data-card]")).to_have_count(10, timeout=15000)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    page.wait_for_timeout(300)  # the felt is drawn again for the narrow screen
    expect(page.locator(".felt")).to_be_in_viewport()
    page.screenshot(path=str(shots / "phone.png"), full_page=True)


def test_a_refused_join_is_explained_in_the_api_s_words(page: Page, service: str) -> None:
    api = Api(service)
    holders = [api.player(f"H{i}") for i in range(3)]
    made = api.http.post("/tables", json={"game": "mighty-3", "name": "Full house", "seat": 0},
                         headers={"Authorization": f"Bearer {holders[0]}"})
    table = made.json()["table"]
    log_in(page, service, "Ana")
    row = page.locator(f"[data-table='{table}']")
    expect(row.locator("[data-action=join]")).to_be_visible()
    for seat, token in enumerate(holders[1:], start=1):  # the seats go while the lobby shows them free
        assert api.http.post(f"/tables/{table}/join", json={"seat": seat},
                             headers={"Authorization": f"Bearer {token}"}).status_code == 200
    row.locator("[data-action=join]").click()
    expect(page.locator("#toast")).to_be_visible()
    message = page.locator("#toast").inner_text()
    assert table in message or "seat" in message.lower() or "started" in message.lower(), message


INJECTED = """() => ({
  elements: document.querySelectorAll("img, iframe, object, embed, b, [onerror], [onclick], [onload]").length,
  inlineScripts: [...document.scripts].filter((s) => !s.src).length,
})"""

LOBBY_ROWS = """() => Object.fromEntries([...document.querySelectorAll("[data-table]")].map((row) => [
  row.dataset.table,
  { name: row.querySelector(".what strong").textContent,
    seats: [...row.querySelectorAll(".seat-chip a")].map((a) => a.textContent) },
]))"""


def test_every_hostile_name_is_shown_as_written_in_the_lobby_and_at_a_table(
        page: Page, service: str, shots: Path) -> None:
    """Names and table names of tests/fixtures/hostile_names.py read back as written (the
    DOM's textContent), with no element made of them and no dialog opened."""
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    api = Api(service)
    tokens = [api.player(name) for name in HOSTILE_NAMES]

    def bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    expected: dict[str, tuple[str, list[str]]] = {}  # table -> its name, the names seated
    for n, table_name in enumerate(HOSTILE_TABLE_NAMES):  # one of each name waiting at a table of that name
        owner = n % len(HOSTILE_NAMES)
        made = api.http.post("/tables", json={"game": "mighty-5", "seat": 0, "name": table_name},
                             headers=bearer(tokens[owner]))
        assert made.status_code == 201, made.text
        expected[made.json()["table"]] = (table_name, [HOSTILE_NAMES[owner]])
    groups = [list(range(start, min(start + 5, len(HOSTILE_NAMES)))) for start in range(0, len(HOSTILE_NAMES), 5)]
    played = []
    for group in groups:  # every name at a table that plays
        game = {5: "mighty-5", 4: "mighty-4", 3: "mighty-3"}[len(group)]
        made = api.http.post("/tables", json={"game": game, "seat": 0, "name": "hostile"},
                             headers=bearer(tokens[group[0]]))
        assert made.status_code == 201, made.text
        table = made.json()["table"]
        for seat, n in enumerate(group[1:], start=1):
            joined = api.http.post(f"/tables/{table}/join", json={"seat": seat}, headers=bearer(tokens[n]))
            assert joined.status_code == 200, joined.text
        expected[table] = ("hostile", [HOSTILE_NAMES[n] for n in group])
        played.append(table)

    me = "<img src=x onerror=a()>"
    log_in(page, service, me)
    assert me in (page.locator("header").text_content() or "")
    for table in expected:
        expect(page.locator(f"[data-table='{table}']")).to_be_visible()
    rows = page.evaluate(LOBBY_ROWS)
    for table, (table_name, seated) in expected.items():
        assert rows[table] == {"name": table_name, "seats": seated}, (table, rows[table])
    assert page.evaluate(INJECTED) == {"elements": 0, "inlineScripts": 0}
    page.screenshot(path=str(shots / "hostile-lobby.png"))

    for table in played:  # watch each playing table from the lobby, by clicks
        page.locator(f"[data-table='{table}'] [data-action=spectate]").click()
        seated = expected[table][1]
        plates = page.locator(".nameplate .name")
        expect(plates).to_have_count(len(seated), timeout=15000)
        assert sorted(plates.all_text_contents()) == sorted(seated)
        assert page.evaluate(INJECTED) == {"elements": 0, "inlineScripts": 0}
        if table == played[0]:
            page.screenshot(path=str(shots / "hostile-table.png"))
            page.set_viewport_size({"width": 390, "height": 844})  # a phone
            expect(plates).to_have_count(len(seated))
            page.wait_for_timeout(300)  # the felt is drawn again for the narrow screen
            page.screenshot(path=str(shots / "hostile-phone.png"), full_page=True)
            page.set_viewport_size({"width": 1200, "height": 860})
        page.locator("nav a[href='#/']").click()
        expect(page.locator(f"[data-table='{table}']")).to_be_visible()
    assert not dialogs, dialogs

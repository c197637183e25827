"""The ratings in the web client, in a real browser against the real service (the ratings
worker among the workers; docs/ratings.md): a match of five guests played through the
API, then the leaderboard page and a player's page with their rating's SVG chart."""

from __future__ import annotations

import random
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def _play_a_one_hand_match(service: str) -> list[dict[str, str]]:
    api = f"{service}/api/v1"
    guests = [httpx.post(f"{api}/players", json={"name": f"Rater{i}"}, timeout=15).json() for i in range(5)]
    auth = [{"Authorization": f"Bearer {g['token']}"} for g in guests]
    table = httpx.post(f"{api}/tables", json={"game": "mighty-5", "seat": 0, "hands": 1}, headers=auth[0],
                       timeout=15).json()["table"]
    for seat in range(1, 5):
        assert httpx.post(f"{api}/tables/{table}/join", json={"seat": seat}, headers=auth[seat],
                          timeout=15).status_code == 200
    rng = random.Random(7)
    for step in range(1000):
        public = httpx.get(f"{api}/tables/{table}/view", timeout=15).json()
        if public["status"] == "closed":
            return guests
        seat = public["to_act"]
        view = httpx.get(f"{api}/tables/{table}/view", headers=auth[seat], timeout=15).json()
        command = dict(rng.choice(view["legal"]))
        if command["type"] == "discard" and "count" in command:
            command["cards"] = rng.sample(command.pop("from"), command.pop("count"))
        answer = httpx.post(f"{api}/tables/{table}/commands", json={"id": f"m{step}", "command": command},
                            headers=auth[seat], timeout=15)
        assert answer.status_code == 200, answer.text
    raise AssertionError("the match did not end")


def test_the_leaderboard_and_a_players_rating_chart_after_a_rated_match(page: Page, service: str,
                                                                         shots: Path) -> None:
    guests = _play_a_one_hand_match(service)
    ana = guests[0]["player"]
    deadline = time.monotonic() + 30
    while not httpx.get(f"{service}/api/v1/players/{ana}", timeout=15).json()["ratings"]:
        assert time.monotonic() < deadline, "the ratings worker did not rate the hand"
        time.sleep(0.2)

    page.goto(f"{service}/#/leaderboards/mighty-5")
    rows = page.locator("table.board tbody tr")
    expect(rows).to_have_count(5)
    expect(page.locator(f"table.board tr[data-player='{ana}']")).to_contain_text("Rater0")
    page.screenshot(path=str(shots / "leaderboard.png"), full_page=True)

    page.click(f"table.board tr[data-player='{ana}'] a")
    rating = page.locator(".rating[data-game='mighty-5']")
    expect(rating).to_be_visible()
    expect(rating.locator(".badge")).to_be_visible()  # one hand: provisional
    expect(rating.locator("svg.rating-chart polyline")).to_have_count(1)
    expect(rating.locator("svg.rating-chart")).to_have_attribute("data-points", "1")
    expect(page.locator("[data-stat=finished]")).to_have_text("1")
    expect(page.locator("[data-stat=abandoned]")).to_have_text("0")
    page.screenshot(path=str(shots / "player-ratings.png"), full_page=True)

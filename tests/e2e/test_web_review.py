"""The 1024×768 layout, learners' hints and the review of a hand, in the web client.

The person (seat 0) creates a one-hand mighty-5 table with hints for learners and bots in
the other seats, at 1024×768, and plays it from the page alone: at each of their turns
the key panels must not overlap (bounding boxes, as at 1280×800 and 390×844 in
``test_web_table.py``); at the first turn of a phase the **Hint** button (then the key
H) shows what a bot would play and outlines it. After the hand the result panel's review
(the key R) shows every seat's cards open, and at the last step every played card dimmed
with the trick it went to. Screenshots: ``web-mighty-5-<phase>-1024.png``,
``web-review-1024.png``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from playwright.sync_api import Error, Page, expect

from tests.e2e.test_web_client import log_in
from tests.e2e.test_web_table import (
    assert_laid_out,
    my_turn,
    one_move,
    page,
    service,
    shoot,
    version,
    wait_for_change,
)

__all__ = ["page", "service"]  # the fixtures, shared with test_web_table.py

TABLET = {"width": 1024, "height": 768}


def test_at_1024_a_learner_asks_for_hints_plays_a_hand_and_reviews_it(page: Page, service: str, shots: Path) -> None:
    page.set_viewport_size(TABLET)
    log_in(page, service, "Ana")
    form = page.locator("form:has([data-action=create_table])")
    form.locator("select[name=game]").select_option("mighty-5")
    form.locator("input[name=hands]").fill("1")
    form.locator("input[name=turn_seconds]").fill("60")
    form.locator("[data-action=hints]").check()
    page.click("[data-action=create_table]")
    page.wait_for_url(re.compile(r"#/t/"))

    seen: set[str] = set()
    hinted: set[str] = set()
    deadline = time.monotonic() + 200
    while time.monotonic() < deadline:
        if page.locator("[data-result]").count():
            break
        if not my_turn(page):
            time.sleep(0.05)
            continue
        phase = page.locator(".table-page").get_attribute("data-phase") or ""
        try:
            if phase not in hinted:
                # the first turn of each phase: a hint, by the button (bidding) or the key
                if phase == "bidding":
                    page.locator("[data-action=hint]").click()
                else:
                    page.keyboard.press("h")
                expect(page.locator("[data-hint]")).to_be_visible(timeout=5000)
                assert "Hint" in page.locator("[data-action=hint]").inner_text()
                if phase == "play":  # the suggested card, outlined in the hand, the hand above the fold
                    expect(page.locator(".hand .card-button.hinted")).to_have_count(1)
                    bottom = page.locator(".hand").evaluate("e => e.getBoundingClientRect().bottom")
                    assert bottom <= TABLET["height"] + 1, bottom
                hinted.add(phase)
                assert_laid_out(page)
                shoot(page, shots, "mighty-5", phase)
            elif phase == "play":
                assert_laid_out(page)
        except (Error, AssertionError):
            if not my_turn(page):  # the turn went (timed out, or the page drew a new view)
                continue
            raise
        before = version(page)
        try:
            one_move(page, seen, lambda phase: shoot(page, shots, "mighty-5", phase))
        except Error:
            continue
        try:
            wait_for_change(page, before, 10)
        except AssertionError:
            continue
    else:
        raise AssertionError(f"the hand did not end in time; seen {sorted(seen)}, hinted {sorted(hinted)}")
    assert {"bidding", "play"} <= hinted, hinted

    result = page.locator("[data-result]").first
    expect(result).to_be_visible()
    expect(page.locator("[data-action=review]")).to_be_visible()
    assert_laid_out(page)
    shoot(page, shots, "mighty-5", "result")

    page.keyboard.press("r")  # the review, by its key
    page.wait_for_url(re.compile(r"#/r/.*as=audit"))
    review = page.locator("[data-review]")
    expect(review).to_be_visible()
    expect(review.locator("[data-review-seat]")).to_have_count(5)
    assert review.locator(".card.played").count() == 0  # the deal: nothing played yet
    page.keyboard.press("End")
    expect(page.locator("[data-review] .card.played").first).to_be_visible()
    played = page.locator("[data-review] .card.played")
    tricks = played.locator("[data-trick]").evaluate_all("els => els.map((e) => e.dataset.trick)")
    # 10 tricks of 5 cards, and the 3 the declarer buried
    assert sorted(t for t in tricks if t != "buried") == sorted(str(n) for n in range(1, 11) for _ in range(5))
    assert tricks.count("buried") == 3
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= TABLET["width"] + 1, width
    for _ in range(22):  # back to the middle of the play: cards held and cards played side by side
        page.keyboard.press("ArrowLeft")
    expect(page.locator("[data-review] .gone .card.played").first).to_be_visible()
    held = page.locator("[data-review] .row > .card:not(.played)").count()
    gone = page.locator("[data-review] .card.played").count()
    assert held and gone and held + gone == 53, (held, gone)  # every card of the pack, once
    page.locator("[data-review]").evaluate("e => e.scrollIntoView({ block: 'center' })")
    page.wait_for_timeout(150)
    page.screenshot(path=str(shots / "web-review-1024.png"))

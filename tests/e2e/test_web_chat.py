"""Two people in two browsers (Debian's Chromium, driven by clicks and keys only): one
creates a private table, the other joins it by the invite link, and they chat
(docs/api.md, "Private tables" and "Table chat"; docs/web.md, "Chat")."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from playwright.sync_api import Browser, Page, expect

from tests.e2e.test_web_client import log_in


def _chat(page: Page, text: str) -> None:
    page.click("input[name=chat]")
    page.keyboard.type(text)
    page.keyboard.press("Enter")


def test_a_private_table_is_joined_by_its_link_and_its_two_players_chat(
        page: Page, browser: Browser, service: str, shots: Path) -> None:
    log_in(page, service, "Ana")
    page.click(".create [data-action=private]")
    page.select_option("select[name=bot-1]", "")  # a seat for the friend the link invites (bots in the rest)
    page.click("[data-action=create_table]")
    page.wait_for_url(re.compile(r"#/t/"), timeout=20000)
    table = page.url.split("#/t/")[1]
    link_field = page.locator(".invite-link")
    expect(link_field).to_have_value(re.compile(rf"#/join/{table}/[A-Za-z0-9_-]{{22}}$"), timeout=10000)
    link = link_field.input_value()
    listed = httpx.get(f"{service}/api/v1/tables", params={"limit": 200}).json()["tables"]
    assert table not in {t["table"] for t in listed}  # no lobby shows it

    other = browser.new_context(viewport={"width": 1200, "height": 860})
    bo = other.new_page()
    errors: list[str] = []
    bo.on("pageerror", lambda error: errors.append(str(error)))
    try:
        bo.goto(link)
        bo.click("input[name=name]")
        bo.keyboard.type("Bo")
        bo.click("[data-action=join_invite]")
        bo.wait_for_url(re.compile(rf"#/t/{table}$"), timeout=20000)
        expect(bo.locator(".invite-link")).to_have_count(0)  # only the creator is shown the code
        expect(page.locator(".seat").filter(has_text="Bo").first).to_be_visible(timeout=10000)

        _chat(page, "hi Bo <b>welcome</b>")
        for reader in (page, bo):  # pushed to both, shown as text
            expect(reader.locator("[data-chat] .chat-message").last).to_contain_text("hi Bo <b>welcome</b>",
                                                                                     timeout=10000)
        assert bo.locator("[data-chat] b").count() == 0
        bo.click("[data-phrase=good_luck]")
        for reader in (page, bo):
            expect(reader.locator("[data-chat] .chat-message").last).to_contain_text("Good luck!", timeout=10000)
        _chat(bo, "thanks, you too")
        expect(page.locator("[data-chat] .chat-message").last).to_contain_text("thanks, you too", timeout=10000)
        page.screenshot(path=str(shots / "chat.png"))
        bo.set_viewport_size({"width": 390, "height": 844})  # a phone
        bo.wait_for_timeout(300)
        bo.locator(".chat").scroll_into_view_if_needed()
        bo.screenshot(path=str(shots / "chat-phone.png"), full_page=True)

        # Ana mutes Bo: his next message reaches Bo's own page, not hers
        page.locator("[data-chat] [data-action=mute]").last.click()
        expect(page.locator("[data-chat] .chat-message").filter(has_text="thanks, you too")).to_have_count(0)
        _chat(bo, "can you hear me")
        expect(bo.locator("[data-chat] .chat-message").last).to_contain_text("can you hear me", timeout=10000)
        page.wait_for_timeout(1000)
        expect(page.locator("[data-chat] .chat-message").filter(has_text="can you hear me")).to_have_count(0)
    finally:
        other.close()
    assert not errors, f"the second page threw: {errors}"

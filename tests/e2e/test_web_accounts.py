"""Accounts in the web client, by clicks and keys in a real browser against the real
service (docs/accounts.md): sign up, log out (the token then refused by the server), log
in again, and a guest who keeps its history by becoming an account."""

from __future__ import annotations

import secrets
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e
PASSWORD = "a long passphrase 42"


def type_into(page: Page, selector: str, text: str) -> None:
    page.click(selector)
    page.keyboard.type(text)


def stored(page: Page, field: str) -> str:
    value: str = page.evaluate(f"JSON.parse(localStorage.getItem('mighty.session') || '{{}}').{field} || ''")
    return value


def can_act(service: str, token: str) -> int:
    answer = httpx.post(f"{service}/api/v1/tables", json={"game": "mighty-5", "seat": None},
                        headers={"Authorization": f"Bearer {token}"}, timeout=15)
    return answer.status_code


def test_a_person_signs_up_logs_out_and_logs_in_again(page: Page, service: str, shots: Path) -> None:
    name = "Mina" + secrets.token_hex(2)
    page.goto(f"{service}/")
    type_into(page, "[data-form=sign-up] input[name=account]", name)
    type_into(page, "[data-form=sign-up] input[name=password]", PASSWORD)
    page.screenshot(path=str(shots / "accounts.png"), full_page=True)
    page.click("[data-action=sign-up]")
    expect(page.locator("[data-action=quickplay]")).to_be_visible()
    expect(page.locator("#me")).to_contain_text(name)
    first = stored(page, "token")
    assert stored(page, "refresh") and "password" not in page.evaluate("localStorage.getItem('mighty.session')")

    page.click("[data-action=account]")
    expect(page.locator("[data-account-name]")).to_have_text(name)
    page.screenshot(path=str(shots / "account.png"))
    page.click("[data-action=log-out-here]")
    expect(page.locator("[data-form=log-in]")).to_be_visible()
    assert stored(page, "token") == ""
    assert can_act(service, first) == 401  # logged out on the server, not only forgotten here

    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    type_into(page, "[data-form=log-in] input[name=account]", name.upper())
    type_into(page, "[data-form=log-in] input[name=password]", "not the passphrase")
    page.click("[data-action=log-in]")
    expect(page.locator("#toast")).to_contain_text("No account has that name and password.")
    page.screenshot(path=str(shots / "accounts-phone.png"), full_page=True)
    page.fill("[data-form=log-in] input[name=password]", "")
    type_into(page, "[data-form=log-in] input[name=password]", PASSWORD)
    page.keyboard.press("Enter")
    expect(page.locator("[data-action=quickplay]")).to_be_visible()
    expect(page.locator("#me")).to_contain_text(name)
    assert can_act(service, stored(page, "token")) == 201


def test_a_guest_keeps_its_history_by_becoming_an_account(page: Page, service: str) -> None:
    page.goto(f"{service}/")
    type_into(page, "input[name=name]", "Wanderer")
    page.click("[data-action=login]")
    expect(page.locator("[data-action=quickplay]")).to_be_visible()
    guest, guest_token = stored(page, "player"), stored(page, "token")
    page.click("[data-action=account]")
    expect(page.locator("[data-form=keep] input[name=account]")).to_have_value("Wanderer")
    page.fill("[data-form=keep] input[name=account]", "")
    name = "Keeper" + secrets.token_hex(2)
    type_into(page, "[data-form=keep] input[name=account]", name)
    type_into(page, "[data-form=keep] input[name=password]", PASSWORD)
    page.click("[data-action=keep]")
    expect(page.locator("#me")).to_contain_text(name)
    assert stored(page, "player") == guest and stored(page, "refresh")
    assert can_act(service, guest_token) == 401  # the guest's token is the account's no more
    page.click("[data-action=account]")
    page.click("[data-action=delete-account]")
    page.click("[data-action=delete-for-good]")
    expect(page.locator("[data-form=log-in]")).to_be_visible()
    found = httpx.get(f"{service}/api/v1/players/{guest}", timeout=15).json()
    assert found["name"] == "Deleted player"

"""Private tables (docs/api.md, "Private tables"), against ``mighty gateway`` on a real
redis-server with the projection workers: listed to nobody, joined with the invite code
only its creator is shown."""
# ruff: noqa: F811 - ``gateway``, the fixture of test_gateway.py, is every test's argument

from __future__ import annotations

import time
from typing import Any

import pytest

from services.store.compact import unpack
from services.store.keys import KeySpace
from tests.integration.test_gateway import Gateway, gateway  # noqa: F401 - the fixture
from tests.stream_entries import as_fields

pytestmark = pytest.mark.integration


def _private_table(gateway: Gateway, creator: dict[str, str], **extra: Any) -> dict[str, Any]:
    made = gateway.http.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0, "private": True, **extra},
                             headers=gateway.headers(creator))
    assert made.status_code == 201, made.text
    table: dict[str, Any] = made.json()
    return table


def _listed(gateway: Gateway, table: str) -> bool:
    ids: set[str] = set()
    cursor: str | None = None
    while True:
        page = gateway.http.get("/api/v1/tables", params={"limit": 200, **({"cursor": cursor} if cursor else {})})
        assert page.status_code == 200, page.text
        ids |= {t["table"] for t in page.json()["tables"]}
        cursor = page.json().get("cursor")
        if cursor is None:
            return table in ids


def test_a_private_table_is_in_no_lobby_listing_while_a_public_one_is(gateway: Gateway) -> None:
    ana = gateway.player("Ana")
    private = _private_table(gateway, ana)["table"]
    public = gateway.table([ana], "mighty-5")
    deadline = time.monotonic() + 15
    while not _listed(gateway, public):  # the directory worker has caught up with both
        assert time.monotonic() < deadline, "the public table never reached the lobby"
        time.sleep(0.05)
    assert gateway.http.get(f"/api/v1/tables/{private}").status_code == 200  # it exists
    assert not _listed(gateway, private)
    for status in ("open", "playing", "finished"):
        listed = gateway.http.get("/api/v1/tables", params={"status": status, "game": "mighty-5"}).json()
        assert private not in {t["table"] for t in listed["tables"]}


def test_the_invite_is_shown_to_the_creator_only_and_never_in_the_tables_events(
        gateway: Gateway, redis_client: Any) -> None:
    ana, bo = gateway.player("Ana"), gateway.player("Bo")
    made = _private_table(gateway, ana)
    code = made["invite"]
    assert made["private"] is True and isinstance(code, str) and len(code) >= 22
    table = made["table"]
    assert gateway.http.get(f"/api/v1/tables/{table}", headers=gateway.headers(ana)).json()["invite"] == code
    assert gateway.http.get(f"/api/v1/tables/{table}", headers=gateway.headers(bo)).json()["invite"] is None
    assert gateway.http.get(f"/api/v1/tables/{table}").json()["invite"] is None
    # the table's stream holds the code's hash, never the code
    events = as_fields(redis_client.xrange(KeySpace().table(table).events))  # six fields (tests/stream_entries.py)
    stored = b"".join(unpack(value) if name == b"e" else value  # events are stored packed
                      for _, fields in events for name, value in fields.items())
    assert code.encode() not in stored
    assert b"invite_hash" in stored


def test_a_join_without_the_code_or_with_a_wrong_one_is_refused_and_with_it_seated(gateway: Gateway) -> None:
    ana, bo = gateway.player("Ana"), gateway.player("Bo")
    made = _private_table(gateway, ana)
    table, code = made["table"], made["invite"]
    join = f"/api/v1/tables/{table}/join"
    for body in (None, {"seat": 1}, {"invite": code[:-1] + ("A" if code[-1] != "A" else "B")}, {"invite": ""}):
        refused = gateway.http.post(join, json=body, headers=gateway.headers(bo))
        assert refused.status_code == 403, refused.text
        assert refused.json()["code"] == "invite_required"
    assert gateway.http.get(f"/api/v1/tables/{table}").json()["seats"][1]["player"] is None  # nothing changed
    joined = gateway.http.post(join, json={"invite": code}, headers=gateway.headers(bo))
    assert joined.status_code == 200, joined.text
    assert joined.json() == {"seat": 1}
    # once seated, joining again (the same seat) needs no code
    assert gateway.http.post(join, json={}, headers=gateway.headers(bo)).json() == {"seat": 1}


def test_quickplay_never_seats_a_player_at_a_private_table(gateway: Gateway) -> None:
    ana, bo = gateway.player("Ana"), gateway.player("Bo")
    private = _private_table(gateway, ana, game="mighty-3")["table"]
    seated = gateway.http.post("/api/v1/quickplay", json={"game": "mighty-3", "wait_seconds": 0},
                               headers=gateway.headers(bo))
    assert seated.status_code == 200, seated.text
    assert seated.json()["table"] != private
    assert bo["player"] not in {s["player"] for s in gateway.http.get(f"/api/v1/tables/{private}").json()["seats"]}

"""Table chat's limits are the service's settings (``MIGHTY_CHAT_*``, services/settings.py;
services/gateway/chat.py ``ChatLimits``): a message's length, a player's rate of messages
and of quick phrases, and the rule against near-duplicates. Through the gateway, over
fakeredis."""

from __future__ import annotations

from typing import Any

from tests.unit.gateway_helpers import auth, gateway, new_player


def _say(client: Any, table: str, player: dict[str, str], **body: Any) -> Any:
    return client.post(f"/api/v1/tables/{table}/chat", json=body, headers=auth(player))


def _table(client: Any, player: dict[str, str]) -> str:
    made = client.post("/api/v1/tables", json={"seat": 0}, headers=auth(player))
    assert made.status_code == 201, made.text
    table: str = made.json()["table"]
    return table


def test_a_message_longer_than_the_setting_is_refused_and_one_at_it_goes() -> None:
    with gateway(chat_text_max=12) as client:
        ana = new_player(client)
        table = _table(client, ana)
        refused = _say(client, table, ana, text="x" * 13)
        assert refused.status_code == 422 and refused.json()["code"] == "bad_message", refused.text
        assert "1 to 12 characters" in refused.json()["message"]
        assert _say(client, table, ana, text="y" * 12).status_code == 201
        listed = client.get(f"/api/v1/tables/{table}/chat").json()
        assert [m["text"] for m in listed["messages"]] == ["y" * 12]
        assert listed["text_max"] == 12  # what a client bounds its input by


def test_the_rate_is_the_settings_and_quick_phrases_have_their_own() -> None:
    with gateway(chat_rate=2, chat_rate_window_s=60, chat_phrase_rate=1, chat_phrase_window_s=60) as client:
        ana = new_player(client)
        table = _table(client, ana)
        assert [_say(client, table, ana, text=t).status_code for t in ("one", "two")] == [201, 201]
        third = _say(client, table, ana, text="three")
        assert third.status_code == 429 and third.json()["code"] == "rate_limited", third.text
        assert "At most 2 messages in 60 s" in third.json()["message"] and "Retry-After" in third.headers
        assert _say(client, table, ana, phrase="hello").status_code == 201  # outside the messages' rate
        again = _say(client, table, ana, phrase="thanks")
        assert again.status_code == 429 and "At most 1 quick phrases in 60 s" in again.json()["message"]


def test_near_duplicates_are_refused_within_the_setting_and_not_at_all_with_it_at_zero() -> None:
    with gateway(chat_recent=1, chat_recent_s=60) as client:
        ana = new_player(client)
        table = _table(client, ana)
        assert _say(client, table, ana, text="gg").status_code == 201
        repeated = _say(client, table, ana, text=" GG! ")
        assert repeated.status_code == 422 and repeated.json()["code"] == "repeated_message", repeated.text
        assert _say(client, table, ana, text="nice").status_code == 201
        assert _say(client, table, ana, text="gg").status_code == 201  # only the last one counts
    with gateway(chat_recent=0) as client:
        ana = new_player(client)
        table = _table(client, ana)
        assert [_say(client, table, ana, text="gg").status_code for _ in range(3)] == [201, 201, 201]

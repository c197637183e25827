"""The terminal client's accounts and the table's chat, driven by Textual's pilot against
a gateway played by ``httpx.MockTransport`` (docs/accounts.md; docs/api.md, "Accounts"
and "Table chat"): logging in and out from the lobby, the access token renewed with the
session's refresh token, the chat's messages in the log as written, a message sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from textual.app import App
from textual.widgets import Input, Static

from clients.terminal import session
from clients.terminal.api import Api
from clients.terminal.app import PlayApp
from clients.terminal.lobby import LobbyScreen
from clients.terminal.stream import TableStream
from clients.terminal.table import TableScreen
from tests.fixtures.hostile_names import HOSTILE_NAMES
from tests.unit.terminal_tables import catalogue

URL = "http://gateway.test"


async def until(pilot: Any, ok: Callable[[], bool], what: str, timeout_s: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not ok():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.01)


class Gateway:
    """The routes the client calls, answered as docs/api.md says; every request kept."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any, str | None]] = []
        self.live = {"guest-token", "access-1"}  # the tokens the gateway takes now

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or None
        path = request.url.path.removeprefix("/api/v1")
        self.requests.append((request.method, path, body, token))
        if path == "/games":
            return httpx.Response(200, json={"games": catalogue("en")})
        if path == "/tables" and request.method == "GET":
            if token is not None and token not in self.live:
                return httpx.Response(401, json={"code": "unauthorized", "message": "That token is not valid."})
            return httpx.Response(200, json={"tables": []})
        if path == "/sessions" and request.method == "POST":
            if body != {"name": "Ana", "password": "correct horse"}:
                return httpx.Response(401, json={"code": "bad_credentials",
                                                 "message": "No account has that name and password."})
            return httpx.Response(200, json={"player": "p-ana", "name": "Ana", "token": "access-1",
                                             "refresh": "refresh-1", "expires": "2030-01-01T00:00:00Z"})
        if path == "/sessions/refresh":
            assert body == {"refresh": "refresh-1"}
            self.live.add("access-2")
            return httpx.Response(200, json={"player": "p-ana", "name": "Ana", "token": "access-2",
                                             "refresh": "refresh-1", "expires": "2030-01-01T00:15:00Z"})
        if path == "/sessions" and request.method == "DELETE":
            self.live -= {"access-1", "access-2"}
            return httpx.Response(204)
        if path.endswith("/chat"):
            return httpx.Response(201, json={"id": "1-0", "at": "2030-01-01T00:00:00Z"})
        return httpx.Response(404, json={"code": "not_found", "message": path})


def a_client(tmp_path: Path, gateway: Gateway) -> PlayApp:
    config = tmp_path / "play.json"
    session.save(config, URL, {"player": "p-guest", "name": "Gus", "token": "guest-token"})
    app = PlayApp(URL, config=config)
    app.api = Api(URL, transport=httpx.MockTransport(gateway))
    return app


def test_logging_in_and_out_of_an_account_from_the_lobby_keeps_the_guest_to_come_back_to(tmp_path: Path) -> None:
    gateway = Gateway()
    app = a_client(tmp_path, gateway)
    config = tmp_path / "play.json"

    async def drive() -> None:
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            lobby = app.screen
            await pilot.press("a")
            await pilot.press(*"Ana", "enter", *"wrong password", "enter")
            await until(pilot, lambda: bool(app._notifications), "the refusal")
            assert app.player == "p-guest" and app.api.token == "guest-token"
            app._notifications.clear()
            await pilot.press("a")
            await pilot.press(*"Ana", "enter", *"correct horse", "enter")
            await until(pilot, lambda: app.player == "p-ana", "the account")
            assert "Ana (account)" in str(lobby.query_one("#who", Static).render())
            stored = session.load(config, URL)
            assert stored == {"player": "p-ana", "name": "Ana", "token": "access-1", "refresh": "refresh-1"}
            assert session.load(config, session.guest_key(URL)) == {
                "player": "p-guest", "name": "Gus", "token": "guest-token"}
            assert "correct horse" not in config.read_text()  # the password is never kept
            # the access token runs out: renewed with the refresh token, the call made again
            gateway.live.discard("access-1")
            await app.api.call("GET", "/tables")
            assert app.api.token == "access-2" and session.load(config, URL)["token"] == "access-2"  # type: ignore[index]
            await pilot.press("o")
            await until(pilot, lambda: app.player == "p-guest", "the guest again")
            assert ("DELETE", "/sessions", None, "access-2") in gateway.requests
            assert session.load(config, URL) == {"player": "p-guest", "name": "Gus", "token": "guest-token"}
            assert app.api.token == "guest-token" and app.api.refresh is None
            assert "Gus (guest)" in str(lobby.query_one("#who", Static).render())

    asyncio.run(drive())


class Shown(App[None]):
    def __init__(self, api: Api) -> None:
        super().__init__()
        self.api = api
        self.screen_under_test = TableScreen("t1", seat=0, follow=False)

    def on_mount(self) -> None:
        self.push_screen(self.screen_under_test)


def test_the_tables_chat_shows_every_hostile_name_and_text_as_written_and_sends_a_message() -> None:
    gateway = Gateway()
    app = Shown(Api(URL, "guest-token", transport=httpx.MockTransport(gateway)))

    async def drive() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.screen is app.screen_under_test, "the table")
            screen = app.screen_under_test
            for n, name in enumerate(HOSTILE_NAMES):
                screen.show_chat({"type": "chat", "id": f"{n}-0", "player": f"p{n}", "name": name,
                                  "text": f"[b]{name}[/b]", "at": "2030-01-01T00:00:00Z", "phrase": None})
            await pilot.pause()
            assert screen.chatted == [f"{name}: [b]{name}[/b]" for name in HOSTILE_NAMES]
            assert app.is_running
            await pilot.press("t")
            say = screen.query_one("#say", Input)
            assert say.has_focus and say.region.height > 0
            await pilot.press(*"gg all", "enter")
            await until(pilot, lambda: any(r[1] == "/tables/t1/chat" for r in gateway.requests), "the message")
            assert ("POST", "/tables/t1/chat", {"text": "gg all"}, "guest-token") in gateway.requests
            assert not say.has_focus and say.region.height == 0  # the chat line closes again
            await pilot.press("t", "x", "escape")  # escape closes the line, the table stays
            assert app.screen is screen and not say.has_focus

    asyncio.run(drive())


def test_the_stream_hands_chat_frames_over_and_resumes_after_the_last_one() -> None:
    heard: list[dict[str, Any]] = []
    stream = TableStream(Api(URL, "tok"), "t1", on_view=None, on_state=lambda _: None,  # type: ignore[arg-type]
                         on_chat=heard.append)
    assert "chat_after" not in stream.url()
    frame = {"type": "chat", "id": "17-0", "player": "p1", "name": "Bo", "text": "hi", "at": "x", "phrase": None}
    asyncio.run(stream._frame(frame))
    assert heard == [frame] and "&chat_after=17-0" in stream.url()


def test_a_stream_refused_for_an_old_access_token_renews_it_and_goes_on() -> None:
    gateway = Gateway()
    api = Api(URL, "access-1", transport=httpx.MockTransport(gateway))
    api.refresh = "refresh-1"
    states: list[str] = []
    stream = TableStream(api, "t1", on_view=None, on_state=states.append)  # type: ignore[arg-type]
    asyncio.run(stream._frame({"type": "error", "code": "unauthorized", "message": "That token has expired."}))
    assert api.token == "access-2" and "token=access-2" in stream.url()
    assert not stream._stopped and states == []
    guest = TableStream(Api(URL, "guest-token"), "t1", on_view=None, on_state=states.append)  # type: ignore[arg-type]
    asyncio.run(guest._frame({"type": "error", "code": "unauthorized", "message": "That token is not valid."}))
    assert guest._stopped and states == ["error: That token is not valid."]

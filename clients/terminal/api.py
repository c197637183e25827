"""The public HTTP API (docs/api.md) as the terminal client calls it, over httpx.

Every refusal becomes an ``ApiError`` holding the API's stable code and its sentence for
a person; a gateway that cannot be reached is the code ``offline``.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import httpx

from clients.terminal.catalog import t

PREFIX = "/api/v1"
_RETRIED = frozenset({"unavailable", "offline"})  # docs/api.md: retry with the same command id
_SESSION_PATHS = frozenset({"/sessions", "/sessions/refresh"})
_KEEPALIVE_S = 2.0  # below the gateway's keep-alive timeout (uvicorn: 5 s)
_AGAIN = frozenset({"GET", "DELETE"})  # tried again after any dropped connection (idempotent)
_BACKOFF_S = (0.25, 0.5, 1.0, 2.0, None)  # the pauses between tries; None: the last try


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message


def command_id() -> str:
    """A fresh command id (1–64 of ``A-Za-z0-9_-``, docs/api.md)."""
    return "t-" + secrets.token_hex(8)


class Api:
    """One gateway, as one player (``token``) or as nobody (public reads only)."""

    def __init__(self, url: str, token: str | None = None, *, timeout_s: float = 20.0,
                 transport: httpx.AsyncBaseTransport | None = None, lang: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.token = token
        # the reader's language (docs/api.md): labels, the games' names and refusals come in
        # it; None leaves it to the player's setting, else English
        self.lang = lang
        # an account's session (docs/accounts.md): the refresh token that renews ``token``,
        # and who to tell when it did (the app keeps the new token)
        self.refresh: str | None = None
        self.on_renewed: Callable[[dict[str, Any]], None] | None = None
        # a kept-alive connection is given up before the gateway's own 5 s (uvicorn's
        # default) would close it under a request: the lobby polls every 5 s
        self._http = httpx.AsyncClient(base_url=self.url, timeout=timeout_s, transport=transport,
                                       limits=httpx.Limits(keepalive_expiry=_KEEPALIVE_S))

    async def close(self) -> None:
        await self._http.aclose()

    @property
    def ws_url(self) -> str:
        return "ws" + self.url.removeprefix("http")

    def _with_lang(self, path: str) -> str:
        """``path`` asking for the reader's language, its own query kept (httpx's ``params``
        would replace it)."""
        if not self.lang or "lang=" in path.partition("?")[2]:  # none, or the path names its own
            return path
        return f"{path}{'&' if '?' in path else '?'}{urlencode({'lang': self.lang})}"

    async def call(self, method: str, path: str, body: Any = None, *, auth: bool = True, retry: bool = True) -> Any:
        headers = {"Authorization": f"Bearer {self.token}"} if auth and self.token else {}
        url = PREFIX + self._with_lang(path)
        again: tuple[type[httpx.TransportError], ...] = (httpx.ConnectError, httpx.RemoteProtocolError)
        if method in _AGAIN:
            again += (httpx.ReadError,)
        try:
            try:
                answer = await self._http.request(method, url, json=body, headers=headers)
            except again:
                # a connection the gateway closed as it was reused (keep-alive), or a
                # gateway restarting: once more on a fresh connection before "offline"
                answer = await self._http.request(method, url, json=body, headers=headers)
        except httpx.TransportError as error:
            raise ApiError(0, "offline", t("terminal.offline", url=self.url, error=error)) from error
        if answer.status_code == 204:
            return None
        try:
            data = answer.json()
        except ValueError:
            data = None
        if answer.status_code == 401 and auth and self.refresh and path not in _SESSION_PATHS and retry:
            # an account's access token lives 15 minutes: a new one for the session, once
            await self.renew()
            return await self.call(method, path, body, auth=auth, retry=False)
        if answer.is_error:
            code = data.get("code") if isinstance(data, dict) else None
            message = data.get("message") if isinstance(data, dict) else None
            raise ApiError(answer.status_code, code or f"http_{answer.status_code}",
                           message or f"The server answered {answer.status_code}.")
        return data

    # players
    async def new_player(self, name: str) -> dict[str, Any]:
        made: dict[str, Any] = await self.call("POST", "/players", {"name": name}, auth=False)
        self.token = made["token"]
        return made

    async def me(self) -> dict[str, Any]:
        found: dict[str, Any] = await self.call("GET", "/players/me")
        return found

    # accounts (docs/accounts.md)
    async def log_in(self, name: str, password: str) -> dict[str, Any]:
        """A session of the account: its access and refresh tokens become this client's."""
        made: dict[str, Any] = await self.call("POST", "/sessions", {"name": name, "password": password}, auth=False)
        self.token, self.refresh = made["token"], made["refresh"]
        return made

    async def renew(self) -> dict[str, Any]:
        """A new access token for the session's refresh token."""
        made: dict[str, Any] = await self.call("POST", "/sessions/refresh", {"refresh": self.refresh}, auth=False)
        self.token = made["token"]
        if self.on_renewed is not None:
            self.on_renewed(made)
        return made

    async def log_out(self) -> None:
        """The session ends on every gateway; this client holds no token after it."""
        try:
            await self.call("DELETE", "/sessions")
        finally:
            self.token = self.refresh = None

    async def player(self, player: str) -> dict[str, Any]:
        found: dict[str, Any] = await self.call("GET", f"/players/{player}", auth=False)
        return found

    async def leaderboard(self, game: str, limit: int = 50) -> list[dict[str, Any]]:
        """The rule set's rated players, best ordinal first (``GET /leaderboards/{game}``)."""
        found: dict[str, Any] = await self.call("GET", f"/leaderboards/{game}?limit={limit}", auth=False)
        return list(found["players"])

    # lobby
    async def tables(self, status: str | None = None, game: str | None = None) -> list[dict[str, Any]]:
        query = "&".join(f"{k}={v}" for k, v in (("status", status), ("game", game)) if v)
        listed: dict[str, Any] = await self.call("GET", "/tables" + (f"?{query}" if query else ""), auth=False)
        return list(listed["tables"])

    async def table(self, table: str) -> dict[str, Any]:
        found: dict[str, Any] = await self.call("GET", f"/tables/{table}", auth=False)
        return found

    async def create_table(self, game: str, *, seat: int | None = 0, bots: dict[str, str] | None = None,
                           hands: int | None = None, name: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"game": game, "seat": seat, "bots": bots or {}}
        if hands is not None:
            body["hands"] = hands
        if name:
            body["name"] = name
        made: dict[str, Any] = await self.call("POST", "/tables", body)
        return made

    async def join(self, table: str, seat: int | None = None) -> int:
        joined: dict[str, Any] = await self.call("POST", f"/tables/{table}/join",
                                                 {} if seat is None else {"seat": seat})
        return int(joined["seat"])

    async def leave(self, table: str) -> None:
        await self.call("POST", f"/tables/{table}/leave")

    async def quickplay(self, game: str, wait_seconds: float = 10) -> dict[str, Any]:
        seated: dict[str, Any] = await self.call("POST", "/quickplay", {"game": game, "wait_seconds": wait_seconds})
        return seated

    async def rematch(self, table: str) -> dict[str, Any]:
        made: dict[str, Any] = await self.call("POST", f"/tables/{table}/rematch")
        return made

    # playing
    async def view(self, table: str) -> dict[str, Any]:
        found: dict[str, Any] = await self.call("GET", f"/tables/{table}/view")
        return found

    async def command(self, table: str, command: dict[str, Any], cid: str | None = None) -> int:
        """Send one command; a store outage is retried with the same id, so it is done once."""
        cid = cid or command_id()
        for pause in _BACKOFF_S:
            try:
                answer: dict[str, Any] = await self.call("POST", f"/tables/{table}/commands",
                                                         {"id": cid, "command": command})
                return int(answer["version"])
            except ApiError as error:
                if error.code not in _RETRIED or pause is None:
                    raise
            await asyncio.sleep(pause)  # a gateway restarting comes back within a second or two
        raise AssertionError("unreachable")

    async def hint(self, table: str) -> dict[str, Any]:
        """What a bot would play at the caller's turn, on a table that allows hints."""
        found: dict[str, Any] = await self.call("GET", f"/tables/{table}/hint")
        return found

    # audit and replay
    async def hands(self, table: str) -> list[dict[str, Any]]:
        found: dict[str, Any] = await self.call("GET", f"/tables/{table}/hands", auth=False)
        return list(found["hands"])

    async def replay(self, table: str, hand: int, as_: str) -> list[dict[str, Any]]:
        found: dict[str, Any] = await self.call("GET", f"/tables/{table}/hands/{hand}/replay?as={as_}")
        return list(found["steps"])

    # the table's chat (docs/api.md, "Table chat")
    async def chat(self, table: str, text: str) -> dict[str, Any]:
        said: dict[str, Any] = await self.call("POST", f"/tables/{table}/chat", {"text": text})
        return said

    async def games(self, lang: str | None = None) -> list[dict[str, Any]]:
        """``GET /games``: every game the server plays (in ``lang``, else the reader's)."""
        path = "/games" if lang is None else f"/games?{urlencode({'lang': lang})}"
        listed: dict[str, Any] = await self.call("GET", path, auth=lang is None)
        return list(listed["games"])

    async def ledger(self, table: str) -> dict[str, Any]:
        found: dict[str, Any] = await self.call("GET", f"/tables/{table}/ledger", auth=False)
        return found

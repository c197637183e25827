"""The table's stream (docs/api.md, "The table's stream"): a WebSocket that pushes the
reader's view each time it changes, and carries the reader's commands.

A dropped socket is opened again with ``after=`` the last version seen, so nothing is
missed and nothing comes twice; a command sent while the socket is down goes over HTTP
with the same id instead (the API makes a repeated id harmless).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from clients.terminal.api import Api, ApiError, command_id

ViewHandler = Callable[[dict[str, Any]], Awaitable[None]]
StateHandler = Callable[[str], None]
ChatHandler = Callable[[dict[str, Any]], None]
_ANSWER_S = 15.0  # how long a command waits for its ack over the socket before HTTP
_REOPEN_S = 3.0  # how long a command waits for a dropped socket to open again before HTTP


class TableStream:
    def __init__(self, api: Api, table: str, on_view: ViewHandler, on_state: StateHandler,
                 after: int = 0, on_chat: ChatHandler | None = None) -> None:
        self.api = api
        self.table = table
        self.after = after  # the last version seen: the resume cursor
        self.acked = 0  # the last version a command of ours was acknowledged with (docs/api.md, "acked=")
        self.received: list[int] = []  # every view frame's version as it came, for the record
        self.connects = 0
        self.chat_after: str | None = None  # the last chat message seen: the chat's resume cursor
        self._on_chat = on_chat
        self._on_view = on_view
        self._on_state = on_state
        self._ws: ClientConnection | None = None
        self._answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._stopped = False
        self._open = asyncio.Event()  # set while the socket is open

    @property
    def connected(self) -> bool:
        return self._ws is not None

    def url(self) -> str:
        token = f"&token={quote(self.api.token)}" if self.api.token else ""
        lang = f"&lang={quote(self.api.lang)}" if self.api.lang else ""
        acked = f"&acked={self.acked}" if self.acked > self.after else ""
        chat = f"&chat_after={quote(self.chat_after)}" if self.chat_after else ""
        return (f"{self.api.ws_url}/api/v1/tables/{quote(self.table)}/stream?after={self.after}"
                f"{acked}{chat}{token}{lang}")

    async def run(self) -> None:
        """Read frames until ``stop``; reconnect after any drop, backing off to 5 s."""
        backoff = 0.2
        while not self._stopped:
            try:
                async with connect(self.url(), max_size=2**22, open_timeout=10) as ws:
                    self._ws = ws
                    self._open.set()
                    self.connects += 1
                    self._on_state("connected")
                    backoff = 0.2
                    async for raw in ws:
                        await self._frame(json.loads(raw))
            except (OSError, ConnectionClosed, InvalidHandshake, InvalidURI, TimeoutError, ValueError):
                pass
            finally:
                self._ws = None
                self._open.clear()
                self._fail_waiting()
            if self._stopped:
                break
            self._on_state("reconnecting")
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 5.0)

    async def _frame(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == "view":
            version = int(frame["version"])
            self.received.append(version)
            # never show a view twice, unless the server went back (it lost its last
            # writes: docs/api.md, a view marked ``rollback``): that is the table as it is now
            if version <= self.after and frame.get("rollback") is not True:
                return
            self.after = version
            await self._on_view(frame["view"])
        elif kind == "chat":
            # each message once: a reconnect asks only for those after the last one seen
            if isinstance(frame.get("id"), str):
                self.chat_after = frame["id"]
            if self._on_chat is not None:
                self._on_chat(frame)
        elif kind in ("ack", "refused"):
            waiting = self._answers.pop(str(frame.get("id")), None)
            if waiting is not None and not waiting.done():
                waiting.set_result(frame)
        elif kind == "error":
            if frame.get("code") == "unauthorized" and self.api.refresh:
                # an account's access token ran out (15 minutes): a new one for the
                # session, and the socket opens again with it (``run``)
                try:
                    await self.api.renew()
                    return
                except ApiError:
                    pass
            self._on_state(f"error: {frame.get('message') or frame.get('code')}")
            if frame.get("code") == "unauthorized":
                self._stopped = True

    def _fail_waiting(self) -> None:
        for waiting in self._answers.values():
            if not waiting.done():
                waiting.set_exception(ConnectionResetError("the table's socket closed"))
        self._answers.clear()

    async def send(self, command: dict[str, Any]) -> int:
        """Send a command as the reader's seat: its version, or the refusal as ApiError."""
        version = await self._send(command)
        self.acked = max(self.acked, version)
        return version

    async def _send(self, command: dict[str, Any]) -> int:
        cid = command_id()
        if self._ws is None and not self._stopped and self.connects:
            # the socket dropped and is opening again (a routine reconnect): wait a moment
            # for it rather than meet the same outage over HTTP
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._open.wait(), _REOPEN_S)
        ws = self._ws
        if ws is not None:
            waiting: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            self._answers[cid] = waiting
            try:
                await ws.send(json.dumps({"type": "command", "id": cid, "command": command}))
                answer = await asyncio.wait_for(waiting, _ANSWER_S)
            except (ConnectionClosed, TimeoutError, ConnectionError):
                answer = None  # the socket went away: the same id over HTTP, done once
            finally:
                self._answers.pop(cid, None)
            if answer is not None:
                if answer["type"] == "refused":
                    raise ApiError(422, str(answer.get("code")), str(answer.get("message")))
                return int(answer["version"])
        return await self.api.command(self.table, command, cid)

    async def drop(self) -> None:
        """Close the socket (as a network failure would); ``run`` opens it again."""
        ws = self._ws
        if ws is not None:
            await ws.close()

    async def stop(self) -> None:
        self._stopped = True
        await self.drop()

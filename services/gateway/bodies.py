"""What a request body must be before any route reads it (docs/api.md, "Conventions";
docs/gateway.md, Input): JSON, said so by ``Content-Type: application/json`` (parameters
such as ``; charset=utf-8`` allowed), at most 16 KiB, nested at most ``MAX_DEPTH`` levels.

The media type keeps a page of another origin from sending a body without asking first:
a ``text/plain`` POST is a "simple" cross-origin request a browser sends without a CORS
preflight, a JSON one is not. The depth is checked on the bytes before any decoder sees
them: a decoder recursing through a thousand levels fails with ``RecursionError``.
A POST without a body (join without a seat, leave, rematch) needs no media type.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec
from litestar.response.base import ASGIResponse
from litestar.types import ASGIApp, HTTPRequestEvent, Receive, ReceiveMessage, Scope, Send

from services.gateway import language
from services.gateway.errors import ApiError, problem

MAX_BODY: Final = 16 * 1024  # a request body: larger is 413 too_large (docs/api.md, "Conventions")
MAX_DEPTH: Final = 32  # arrays and objects in one another; a command needs 3
JSON: Final = "application/json"
_WITH_BODY: Final = frozenset({"POST", "PUT", "PATCH"})
# A JSON string (to its closing quote, or to the end if it has none: each byte is read
# once), or a bracket.
_TOKENS: Final = re.compile(rb'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)
_OPENING: Final = frozenset(b"[{")


def nesting_depth(data: bytes, limit: int = MAX_DEPTH) -> int:
    """How deep arrays and objects nest in ``data`` (brackets inside strings do not
    count), counted up to ``limit + 1``: past the limit, how much deeper does not matter."""
    depth = deepest = 0
    for token in _TOKENS.finditer(data):
        first = token.group()[0]
        if first in _OPENING:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif first != 0x22:  # a closing bracket ('"' opens a string)
            depth -= 1
    return deepest


def too_deep(data: bytes) -> bool:
    """Whether ``data`` nests deeper than ``MAX_DEPTH``; most bodies hold fewer brackets
    than that in all, and are not scanned."""
    return data.count(b"[") + data.count(b"{") > MAX_DEPTH and nesting_depth(data) > MAX_DEPTH


def deep_refusal() -> ApiError:
    return ApiError("invalid_request", f"The JSON nests more than {MAX_DEPTH} levels of arrays and objects.")


def is_json(content_type: str) -> bool:
    """``application/json``, with or without parameters (``; charset=utf-8``)."""
    return content_type.partition(";")[0].strip().lower() == JSON


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return ""


async def _refuse(error: ApiError, scope: Scope, receive: Receive, send: Send) -> None:
    answer = ASGIResponse(body=msgspec.json.encode(problem(error.code, error.message, language.of_scope(scope))),
                          status_code=error.status, media_type=JSON)
    await answer(scope, receive, send)


def json_bodies(app: ASGIApp) -> ASGIApp:
    """Read a POST, PUT or PATCH body whole (it is small), check it, then hand it on."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        kind: str = scope["type"]  # ScopeType is a str enum: "http" compares equal
        if kind != "http" or scope.get("method") not in _WITH_BODY:
            await app(scope, receive, send)
            return
        too_large = ApiError("too_large", f"The body is over {MAX_BODY // 1024} KiB.")
        declared = _header(scope, b"content-length")
        if declared.isascii() and declared.isdigit() and len(declared) < 12 and int(declared) > MAX_BODY:
            await _refuse(too_large, scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = bytes(message.get("body", b""))
            size += len(chunk)
            if size > MAX_BODY:
                await _refuse(too_large, scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body and not is_json(_header(scope, b"content-type")):
            await _refuse(ApiError("unsupported_media_type", "A body is JSON, sent as Content-Type: "
                                   f"{JSON}."), scope, receive, send)
            return
        if too_deep(body):
            await _refuse(deep_refusal(), scope, receive, send)
            return
        handed = False

        async def replay() -> ReceiveMessage:
            nonlocal handed
            if handed:
                return await receive()
            handed = True
            whole: HTTPRequestEvent = {"type": "http.request", "body": body, "more_body": False}
            return whole

        await app(scope, replay, send)

    return middleware

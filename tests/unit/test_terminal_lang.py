"""``mighty play --lang``: the terminal client asks for the reader's language on every
call and on its stream (docs/terminal.md, docs/api.md "Games, labels and languages"), and
not at all without the flag."""

from __future__ import annotations

import asyncio

import httpx

from clients.terminal.api import Api
from clients.terminal.stream import TableStream
from services.cli import build_parser


def _ignore(*_: object) -> None:
    return None


def _seen(lang: str | None) -> list[httpx.URL]:
    seen: list[httpx.URL] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        return httpx.Response(200, json={"games": [], "tables": []})

    async def calls() -> None:
        api = Api("http://gateway.test", "tok", transport=httpx.MockTransport(answer), lang=lang)
        await api.call("GET", "/games", auth=False)
        await api.call("GET", "/tables?status=open")
        await api.close()

    asyncio.run(calls())
    return seen


def test_every_call_names_the_language_when_one_is_given() -> None:
    seen = _seen("fi")
    assert [u.params.get("lang") for u in seen] == ["fi", "fi"]
    assert seen[1].params.get("status") == "open"  # the route's own query kept
    assert all("lang" not in u.params for u in _seen(None))


def test_the_stream_names_the_language_too() -> None:
    stream = TableStream(Api("http://gateway.test", "tok", lang="ja"), "t1", _ignore, _ignore)
    assert stream.url().endswith("&token=tok&lang=ja")
    assert "lang=" not in TableStream(Api("http://gateway.test", "tok"), "t1", _ignore, _ignore).url()


def test_the_flag_takes_only_the_services_languages() -> None:
    parser = build_parser()
    assert parser.parse_args(["play", "--lang", "ko"]).lang == "ko"
    assert parser.parse_args(["play"]).lang is None

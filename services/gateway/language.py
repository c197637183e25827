"""The reader's language at the gateway (docs/i18n.md; docs/api.md, "Games, labels and
languages"): the ``lang`` query parameter, else the player's ``lang`` setting, else
``Accept-Language``, else English; and refusals' messages in it.

A refusal's ``code`` never changes with the language. Its ``message`` is the code's
sentence in the reader's catalog (``refusal.<code>``); in English it stays the message
the refusal was made with, which may say more (the table's id, the bound that was
passed). A socket's language is fixed when it connects.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import parse_qs

from litestar.connection import ASGIConnection
from litestar.types import Scope

from services.i18n.catalogs import DEFAULT, catalog
from services.i18n.negotiate import reader_lang, supported

SETTING: Final = "mighty_lang_setting"  # the scope key of the caller's player's setting
QUERY_MAX: Final = 2048  # a middleware reads a query string up to this many characters


def asked(connection: ASGIConnection[Any, Any, Any, Any]) -> str | None:
    """The language the request names itself (``?lang=``), when the service speaks it."""
    return supported(connection.query_params.get("lang"))


def note_setting(connection: ASGIConnection[Any, Any, Any, Any], lang: str | None) -> None:
    """The caller's player's setting, found once the token is checked."""
    connection.scope[SETTING] = lang  # type: ignore[typeddict-unknown-key]


def of(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    """The language to answer ``connection`` in."""
    setting: object = connection.scope.get(SETTING)
    return reader_lang(connection.query_params.get("lang"), setting, connection.headers.get("accept-language"))


def of_scope(scope: Scope) -> str:
    """``of`` for an ASGI middleware's answer, from the raw scope."""
    query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1")[:QUERY_MAX]).get("lang")
    header = next((bytes(v).decode("latin-1") for k, v in scope.get("headers", ()) if k.lower() == b"accept-language"),
                  None)
    setting: object = scope.get(SETTING)
    return reader_lang(query[0] if query else None, setting, header)


def refusal_message(code: str, message: str, lang: str) -> str:
    """A refusal's message for a reader of ``lang``."""
    if lang == DEFAULT:
        return message
    return catalog(lang).get(f"refusal.{code}") or message

"""The terminal client's own words, in the reader's language: the service's PO catalogs
(``services/i18n/locale/<lang>/LC_MESSAGES/mighty.po``, docs/i18n.md), keys ``terminal.…``.

They are read here with Babel, as the service reads them, rather than fetched from the
gateway (``GET /api/v1/i18n/{lang}``): the client has its words before it reaches a
gateway, and to say that it cannot. The catalogs are data of the package; no code of the
service is imported. ``use(lang)`` picks the language (``--lang``, else the player's
setting, else English); ``t(key, **fields)`` says a text, filling its ``{field}``s, the
plural form of ``count`` where the text has forms (``key#one`` … ``key#other``, by CLDR's
rules, as the server picks them). A key a catalog lacks falls back to English, then to the
key itself (a test holds every key the client asks for in every catalog).
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from babel import Locale
from babel.messages.pofile import read_po

LANGS = ("ko", "en", "fi", "ru", "ja", "it")
LOCALE_DIR = Path(__file__).resolve().parents[2] / "services" / "i18n" / "locale"
_FIELD = re.compile(r"\{(\w+)\}")
_current = {"lang": "en"}


@cache
def texts(lang: str) -> dict[str, str]:
    """Every text of ``lang``'s catalog, by key."""
    with (LOCALE_DIR / lang / "LC_MESSAGES" / "mighty.po").open("rb") as source:
        read = read_po(source, locale=lang, domain="mighty")
    return {str(m.id): str(m.string) for m in read if m.id and isinstance(m.id, str) and m.string}


def use(lang: str | None) -> str:
    """Speak ``lang`` from now on (one of ``LANGS``; anything else: English)."""
    _current["lang"] = lang if lang in LANGS else "en"
    return _current["lang"]


def lang() -> str:
    return _current["lang"]


def t(key: str, count: int | None = None, **fields: object) -> str:
    """The text of ``key`` in the current language, its fields filled (as text: a name
    holding braces or markup stays as written)."""
    spoken = _current["lang"]
    text = _lookup(spoken, key, count)
    if text is None and spoken != "en":
        text = _lookup("en", key, count)
    if text is None:
        return key
    if count is not None:
        fields.setdefault("count", count)
    return _FIELD.sub(lambda m: str(fields[m[1]]) if m[1] in fields else m[0], text)


def _lookup(lang: str, key: str, count: int | None) -> str | None:
    found = texts(lang)
    if count is None:
        return found.get(key)
    category = Locale.parse(lang).plural_form(abs(count))
    return found.get(f"{key}#{category}") or found.get(f"{key}#other")


def say_bindings(node: Any) -> None:
    """A screen's key bindings described in the current language: a ``Binding`` whose
    description is a key (``terminal.key.…``) gets its text, on this node's own copy of
    its bindings (the footer shows them)."""
    table = node._bindings.key_to_bindings
    for key, bindings in table.items():
        table[key] = [replace(b, description=t(b.description)) if b.description.startswith("terminal.") else b
                      for b in bindings]

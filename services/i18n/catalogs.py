"""The catalogs: one gettext PO file per language, ``locale/<lang>/LC_MESSAGES/mighty.po``
(docs/i18n.md). A message id is a key (``mighty.bid``, ``refusal.not_your_turn``,
``web.lobby.title``); its text fills ``{name}`` fields from the message's arguments.

The PO files are read with Babel when a process first needs a language (a few
milliseconds each); nothing compiled is checked in. A message shown with a number has one
entry per CLDR plural category of the language, ``key#one``, ``key#few``, ``key#many``,
``key#other`` (English: ``one``, ``other``; Korean and Japanese: ``other`` alone): the
category of the number in ``count`` (``Locale.plural_form``) picks the entry, as the web
client's ``Intl.PluralRules`` does with the same catalog. gettext's own plural formulas
number their forms differently from CLDR (Russian: 3 against CLDR's 4), so they are not used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Final

from babel import Locale
from babel.messages.pofile import read_po

LANGS: Final = ("ko", "en", "fi", "ru", "ja", "it")  # the languages the service speaks
DEFAULT: Final = "en"  # the source language: every key's text is written in English first
LOCALE_DIR: Final = Path(__file__).resolve().parent / "locale"
DOMAIN: Final = "mighty"
PLURAL: Final = "#"  # key#category: a plural form


def po_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@dataclass(frozen=True)
class Catalog:
    """One language's texts by key, and its locale (plural rules, list patterns, numbers)."""

    lang: str
    texts: Mapping[str, str]
    locale: Locale = field(compare=False)

    def get(self, key: str) -> str | None:
        return self.texts.get(key)

    def plural(self, key: str, count: int) -> str | None:
        """``key``'s form for ``count`` (None: ``key`` has no plural forms)."""
        text = self.texts.get(f"{key}{PLURAL}{self.locale.plural_form(abs(count))}")
        return text if text is not None else self.texts.get(f"{key}{PLURAL}other")

    def categories(self) -> frozenset[str]:
        """The CLDR plural categories a plural message needs in this language."""
        return frozenset(self.locale.plural_form.tags) | {"other"}


@cache
def catalog(lang: str) -> Catalog:
    """The catalog of ``lang`` (one of ``LANGS``), read once per process."""
    if lang not in LANGS:
        raise KeyError(lang)
    with po_path(lang).open("rb") as source:
        read = read_po(source, locale=lang, domain=DOMAIN)
    texts = {str(m.id): str(m.string) for m in read if m.id and isinstance(m.id, str) and m.string}
    return Catalog(lang, texts, Locale.parse(lang))


def of(texts: Mapping[str, str], lang: str = DEFAULT) -> Catalog:
    """A catalog of given texts (tests; a language's rules from ``lang``)."""
    return Catalog(lang, dict(texts), Locale.parse(lang))

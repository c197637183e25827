"""A language's catalog as the web client loads it (``GET /api/v1/i18n/{lang}``,
docs/i18n.md): every message of the PO file, built once per process from the catalog
Babel read."""

from __future__ import annotations

from functools import cache

from babel import Locale

from services.gateway.wire import Translations
from services.i18n.catalogs import catalog


@cache
def native_name(lang: str) -> str:
    """The language's name in itself (CLDR): 한국어, English, suomi, русский, 日本語, italiano."""
    return str(Locale.parse(lang).get_display_name(lang))


@cache
def translations(lang: str) -> Translations:
    texts = catalog(lang)
    return Translations(lang=lang, name=native_name(lang), plural_categories=sorted(texts.categories()),
                        messages=dict(texts.texts))

"""The reader's language (docs/api.md, "Games, labels and languages"): the ``lang`` query
parameter, else the player's ``lang`` setting, else ``Accept-Language``, else English.

A header is a stranger's input: it is read only up to ``HEADER_MAX`` characters and
``RANGES_MAX`` ranges; Babel's ``Locale.negotiate`` matches the ranges, in the order of
their ``q``, against the languages the service has.
"""

from __future__ import annotations

from typing import Final

from babel import Locale

from services.i18n.catalogs import DEFAULT, LANGS

HEADER_MAX: Final = 512
RANGES_MAX: Final = 16


def supported(lang: object) -> str | None:
    """``lang`` when it names a language the service speaks (``ko``, ``en``, ...), else None."""
    return lang if isinstance(lang, str) and lang in LANGS else None


def accepted(header: str | None) -> list[str]:
    """An ``Accept-Language`` header's language ranges, the most wanted first (``q`` as
    given, ties in the header's order; ``q=0`` and ``*`` dropped)."""
    if not header:
        return []
    ranges: list[tuple[float, int, str]] = []
    for index, part in enumerate(header[:HEADER_MAX].split(",")[:RANGES_MAX]):
        tag, _, params = part.strip().partition(";")
        tag = tag.strip()
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if tag and tag != "*" and quality > 0:
            ranges.append((-quality, index, tag))
    return [tag for _, _, tag in sorted(ranges)]


def from_header(header: str | None) -> str | None:
    """The service's language that best matches an ``Accept-Language`` header, if any."""
    wanted = accepted(header)
    if not wanted:
        return None
    found = Locale.negotiate(wanted, list(LANGS), sep="-")
    if found is None:  # "ru_RU" or "zh-Hant-TW": their language alone
        found = Locale.negotiate([w.replace("_", "-").split("-")[0] for w in wanted], list(LANGS), sep="-")
    return supported(None if found is None else str(found))


def reader_lang(query: object = None, setting: object = None, header: str | None = None) -> str:
    """The language to render for: ``query``, else the player's ``setting``, else the
    header's best match, else English."""
    return supported(query) or supported(setting) or from_header(header) or DEFAULT

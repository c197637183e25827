"""Messages (``domain/presentation.py``) rendered into text, and the documents that carry
them: the games' catalogue (``GET /api/v1/games``) and a view's legal entries' labels.

A message is rendered when the gateway sends it, in the reader's language (a catalog of
``services/i18n/locale``, docs/i18n.md); stored events and views hold none. A key missing
from a catalog renders as the key itself rather than failing a send (a test holds every
key to be in every catalog). Numbers are written as the language writes them, lists
joined by its CLDR list pattern, and a message with plural forms takes the form of its
``count`` argument's CLDR category.
"""

from __future__ import annotations

from functools import cache
from string import Formatter
from typing import Any, Final

import msgspec
from babel.lists import format_list
from babel.numbers import format_decimal

from domain.games import AnyGame
from domain.presentation import Arg, GameEntry, Message
from domain.registry import GAMES
from services.gateway.wire import Game, Games
from services.i18n.catalogs import DEFAULT, Catalog, catalog

_FIELDS = Formatter()
# Labels a process keeps rendered, every language together; past it they are forgotten
# at once and rendered again (a network-facing process must not grow). A few thousand
# sentences (a card played, a bid, a friend called) serve every table of a language.
LABELS_KEPT: Final = 8192
_kept: dict[tuple[str, bytes], str] = {}
_message_key = msgspec.json.Encoder().encode


def render(message: Message, lang: str | Catalog = DEFAULT) -> str:
    """The message's text in ``lang`` (a language of ``LANGS`` or a catalog): its key's
    text (its form for ``count`` when it has plural forms) with each ``{name}`` filled in."""
    texts = catalog(lang) if isinstance(lang, str) else lang
    count = message.args.get("count")
    text = texts.plural(message.key, count) if isinstance(count, int) else None
    if text is None:
        text = texts.get(message.key)
    if text is None:
        return message.key
    if not message.args:
        return text
    args = message.args
    return "".join(literal if field is None else (_argument(args[field], texts) if field in args else "")
                   for literal, field in _parsed(text))


def label(message: Message, lang: str) -> str:
    """``render(message, lang)``, kept: every push renders the labels of the legal
    commands of the seat to act, and the same sentences recur at every table. A message
    is a frozen struct holding a dict (unhashable): its JSON, which tells every argument
    apart (a string from a number from a message), is its key; rendering is a function of
    the message and the language alone."""
    key = (lang, _message_key(message))
    text = _kept.get(key)
    if text is None:
        if len(_kept) >= LABELS_KEPT:
            _kept.clear()
        text = _kept[key] = render(message, lang)
    return text


@cache
def _parsed(text: str) -> tuple[tuple[str, str | None], ...]:
    """A catalogue text cut into literal text and ``{field}``s: ``("Bid ", None), ("",
    "points")``, … (``string.Formatter``'s reading: ``{{`` is a brace)."""
    parts: list[tuple[str, str | None]] = []
    for literal, field, _spec, _conversion in _FIELDS.parse(text):
        if literal:
            parts.append((literal, None))
        if field is not None:
            parts.append(("", field))
    return tuple(parts)


def _argument(value: Arg, texts: Catalog) -> str:
    if isinstance(value, Message):
        return render(value, texts)
    if isinstance(value, tuple):
        return joined([render(m, texts) for m in value], texts)
    if isinstance(value, int) and not isinstance(value, bool):
        return _number(value, texts.lang)
    return str(value)


@cache
def _number(value: int, lang: str) -> str:
    return format_decimal(value, locale=lang)


def joined(items: list[str], texts: Catalog | None = None) -> str:
    """A list as a sentence in the language says it (CLDR's list pattern): ``a``, ``a and
    b``, ``a, b, and c`` in English, ``a, b ja c`` in Finnish, ``a、b、c`` in Japanese."""
    if len(items) <= 1:
        return "".join(items)
    return format_list(items, locale=(texts or catalog(DEFAULT)).lang)


def messages_of(entry: object) -> list[Message]:
    """Every message in a catalogue entry (for the catalogue's own test)."""
    found: list[Message] = []

    def walk(value: Any) -> None:
        if isinstance(value, Message):
            found.append(value)
            for arg in value.args.values():
                walk(arg)
        elif isinstance(value, msgspec.Struct):
            for field in value.__struct_fields__:
                walk(getattr(value, field))
        elif isinstance(value, tuple | list):
            for item in value:
                walk(item)

    walk(entry)
    return found


def _rendered(value: Any, lang: str) -> Any:
    """A catalogue entry as JSON data, every message rendered in ``lang``."""
    if isinstance(value, Message):
        return render(value, lang)
    if isinstance(value, msgspec.Struct):
        return {f: _rendered(getattr(value, f), lang) for f in value.__struct_fields__}
    if isinstance(value, tuple | list):
        return [_rendered(v, lang) for v in value]
    return value


def game_document(entry: GameEntry, lang: str = DEFAULT) -> Game:
    """One ``Game`` of ``GET /api/v1/games``: the entry's names and data, its messages as
    text in ``lang``. The phase every table has before a deal (``waiting``) comes first."""
    document: dict[str, Any] = _rendered(entry, lang)
    document["phases"] = [{"phase": "waiting", "label": render(Message("phase.waiting"), lang)},
                          *document["phases"]]
    for option in document["options"]:  # the API's names for the bounds
        option["min"], option["max"] = option.pop("minimum"), option.pop("maximum")
    return msgspec.convert(document, Game)


@cache
def games(lang: str = DEFAULT) -> Games:
    """``GET /api/v1/games``: every game of every family, rendered once per language."""
    return Games(games=[game_document(entry, lang) for game in GAMES.values()
                        for entry in game.presentation.catalogue()])


@cache
def _games_by_name() -> dict[str, AnyGame]:
    return {entry.game: game for game in GAMES.values() for entry in game.presentation.catalogue()}


def game_for(name: object) -> AnyGame | None:
    """The game a view's ``game`` field names (a ``CreateTable`` variant), if any."""
    return _games_by_name().get(name) if isinstance(name, str) else None

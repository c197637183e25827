"""What the service speaks and plays (docs/api.md, "Games, labels and languages")."""

from __future__ import annotations

from typing import Any

import structlog
from litestar import Controller, Request, get
from litestar.params import FromPath

from services.gateway import (
    labels,
)
from services.gateway.deps import (
    reader_lang,
)
from services.gateway.errors import ApiError
from services.gateway.translations import native_name, translations
from services.gateway.wire import (
    Games,
    Language,
    Languages,
    Translations,
)
from services.i18n.catalogs import LANGS
from services.i18n.negotiate import supported

log = structlog.get_logger("mighty.gateway")


class LanguagesController(Controller):
    """The languages and each one's catalog."""

    path = "/i18n"

    @get("/", summary="The languages the service speaks", cache=3600)
    async def list_languages(self) -> Languages:
        return Languages(languages=[Language(lang=lang, name=native_name(lang)) for lang in LANGS])

    @get("/{lang:str}", summary="A language's catalog, for a client's own text", cache=3600)
    async def get_translations(self, lang: FromPath[str]) -> Translations:
        if supported(lang) is None:
            raise ApiError("not_found", f"There is no language {lang[:16]!r}: one of {', '.join(LANGS)}.")
        return translations(lang)


class GamesController(Controller):
    """The games' catalogue, in the reader's language."""

    path = "/games"

    @get("/", summary="Every game a table can be created for, as a client shows it")
    async def list_games(self, request: Request[Any, Any, Any]) -> Games:
        return labels.games(await reader_lang(request))

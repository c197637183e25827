"""The web client (``clients/web/``) at ``/`` and the rules guides (``docs/rules/``) at
``/rules/``, as plain files: the client has no build step, and it reads the API like any
other client (docs/web.md)."""

from __future__ import annotations

from pathlib import Path

from litestar import Router
from litestar.static_files import create_static_files_router

from services.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def static_routers(settings: Settings) -> list[Router]:
    """The routers, for the directories that exist (a gateway installed without the
    client serves the API alone); ``settings.web_dir`` (``MIGHTY_WEB_DIR``) serves
    another copy of the client."""
    web = Path(settings.web_dir) if settings.web_dir else ROOT / "clients" / "web"
    rules = ROOT / "docs" / "rules"
    routers = []
    if rules.is_dir():
        routers.append(create_static_files_router(path="/rules", directories=[rules], name="rules",
                                                  include_in_schema=False))
    if web.is_dir():
        routers.append(create_static_files_router(path="/", directories=[web], html_mode=True,
                                                  name="web", include_in_schema=False))
    return routers

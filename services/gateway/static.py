"""The web client (``clients/web/``) at ``/`` and the rules guides (``docs/rules/``) at
``/rules/``, as plain files: the client has no build step, and it reads the API like any
other client (docs/web.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from litestar import Router
from litestar.connection import ASGIConnection
from litestar.exceptions import NotFoundException
from litestar.handlers import BaseRouteHandler
from litestar.static_files import create_static_files_router

from services.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
MAX_PATH: Final = 1024  # characters of a request's path: the longest file here is far shorter
MAX_SEGMENT: Final = 255  # characters of a file or directory name (most file systems' limit)


def names_a_file(path: str) -> bool:
    """Whether a (decoded) request path could name a file under a served directory: no
    control or format character (a NUL makes the OS refuse the name), no ``.`` or ``..``
    segment, no backslash, bounded in length."""
    if len(path) > MAX_PATH or "\\" in path or not path.isprintable():
        return False
    return all(segment not in (".", "..") and len(segment) <= MAX_SEGMENT for segment in path.split("/"))


def file_paths_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """A guard: a path that cannot name a file is 404 ``not_found``, before the file
    system is asked (it raised on a NUL: a 500)."""
    if not names_a_file(connection.scope["path"]):
        raise NotFoundException()


def static_routers(settings: Settings) -> list[Router]:
    """The routers, for the directories that exist (a gateway installed without the
    client serves the API alone); ``settings.web_dir`` (``MIGHTY_WEB_DIR``) serves
    another copy of the client."""
    web = Path(settings.web_dir) if settings.web_dir else ROOT / "clients" / "web"
    rules = ROOT / "docs" / "rules"
    routers = []
    if rules.is_dir():
        routers.append(create_static_files_router(path="/rules", directories=[rules], name="rules",
                                                  include_in_schema=False, guards=[file_paths_only]))
    if web.is_dir():
        routers.append(create_static_files_router(path="/", directories=[web], html_mode=True,
                                                  name="web", include_in_schema=False,
                                                  guards=[file_paths_only]))
    return routers

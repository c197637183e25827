"""The web client (``clients/web/``) at ``/`` and the rules guides (``docs/rules/``) at
``/rules/``, as plain files: the client has no build step, and it reads the API like any
other client (docs/web.md)."""

from __future__ import annotations

import os
from pathlib import Path

from litestar import Router
from litestar.static_files import create_static_files_router

ROOT = Path(__file__).resolve().parents[2]


def static_routers() -> list[Router]:
    """The routers, for the directories that exist (a gateway installed without the
    client serves the API alone)."""
    web = Path(os.environ.get("MIGHTY_WEB_DIR", "") or ROOT / "clients" / "web")
    rules = ROOT / "docs" / "rules"
    routers = []
    if rules.is_dir():
        routers.append(create_static_files_router(path="/rules", directories=[rules], name="rules",
                                                  include_in_schema=False))
    if web.is_dir():
        routers.append(create_static_files_router(path="/", directories=[web], html_mode=True,
                                                  name="web", include_in_schema=False))
    return routers

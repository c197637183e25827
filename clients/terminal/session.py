"""The player the terminal client plays as, kept in a small file so a restart resumes as
the same player: ``$XDG_CONFIG_HOME/mighty/play.json`` (else ``~/.config/mighty/play.json``),
one entry per gateway URL. A guest's entry holds its token; an account's (docs/accounts.md)
its access token and the session's ``refresh`` token, and the guest played before it is
kept beside it (``guest_key``) to come back to when the account logs out."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def default_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mighty" / "play.json"


def load(path: Path, url: str) -> dict[str, str] | None:
    """The player stored for ``url``, or None (no file, a broken one, or another URL's)."""
    try:
        stored: Any = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    entry = stored.get(url) if isinstance(stored, dict) else None
    if isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in ("player", "name", "token")):
        kept = {k: entry[k] for k in ("player", "name", "token")}
        if isinstance(entry.get("refresh"), str):
            kept["refresh"] = entry["refresh"]
        return kept
    return None


def guest_key(url: str) -> str:
    """Where the guest is kept while an account plays at ``url``."""
    return f"{url} guest"


def forget(path: Path, url: str) -> None:
    """No player kept for ``url`` (an account logged out)."""
    stored = _read(path)
    if stored.pop(url, None) is not None:
        _write(path, stored)


def save(path: Path, url: str, who: dict[str, Any]) -> None:
    stored = _read(path)
    stored[url] = {k: who[k] for k in ("player", "name", "token", "refresh") if isinstance(who.get(k), str)}
    _write(path, stored)


def _read(path: Path) -> dict[str, Any]:
    try:
        stored: Any = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


def _write(path: Path, stored: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = path.with_suffix(".tmp")
    fresh.unlink(missing_ok=True)
    # made 0600 from the start: the tokens act as the player
    with os.fdopen(os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
        out.write(json.dumps(stored, indent=2))
    fresh.replace(path)

"""The guest player the terminal client plays as, kept in a small file so a restart
resumes as the same player: ``$XDG_CONFIG_HOME/mighty/play.json`` (else
``~/.config/mighty/play.json``), one entry per gateway URL."""

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
        return {k: entry[k] for k in ("player", "name", "token")}
    return None


def save(path: Path, url: str, who: dict[str, Any]) -> None:
    try:
        stored: Any = json.loads(path.read_text())
    except (OSError, ValueError):
        stored = {}
    if not isinstance(stored, dict):
        stored = {}
    stored[url] = {k: who[k] for k in ("player", "name", "token")}
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = path.with_suffix(".tmp")
    fresh.write_text(json.dumps(stored, indent=2))
    fresh.chmod(0o600)  # the token acts as the player
    fresh.replace(path)

"""Lobby pages (docs/api.md, The lobby): ``GET /tables?limit=&cursor=`` answers at most
``limit`` tables in table-id order and an opaque ``cursor`` to ask for the next page with
(``null`` on the last one). A page reads the directory's ids, then the entries of a
bounded run of them, so that one request never reads the whole directory's entries: with
filters a page may hold fewer than ``limit`` tables and still have a cursor.
"""

from __future__ import annotations

import base64
import binascii
from bisect import bisect_right
from collections.abc import Callable
from typing import Final

from domain.errors import MightyError
from projections.directory import DirectoryEntry
from services.gateway.backend import Backend
from services.gateway.errors import ApiError
from services.store.keys import check_table_id

DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 200
SCAN: Final = 1000  # directory entries a page reads at most
_CHUNK: Final = 100
_PREFIX: Final = "after:"


def encode_cursor(table_id: str) -> str:
    return base64.urlsafe_b64encode((_PREFIX + table_id).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The table id a cursor continues after; 422 ``invalid_request`` for one not given
    by this API."""
    bad = ApiError("invalid_request", "cursor is not one a lobby page gave; start again without it.")
    if len(cursor) > 200:
        raise bad
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        if not text.startswith(_PREFIX):
            raise bad
        return check_table_id(text[len(_PREFIX):])
    except (binascii.Error, UnicodeDecodeError, ValueError, MightyError):
        raise bad from None


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise ApiError("invalid_request", f"limit is a whole number of 1..{MAX_LIMIT}, not {limit}.")
    return limit


async def page(backend: Backend, keep: Callable[[DirectoryEntry], bool], limit: int, cursor: str | None,
               finished: bool | None = None) -> tuple[list[DirectoryEntry], str | None]:
    """The entries ``keep`` keeps after ``cursor``, at most ``limit``, and the next page's
    cursor (None: no more)."""
    after = decode_cursor(cursor) if cursor else None
    ids = await backend.directory_ids(finished)
    at = bisect_right(ids, after) if after is not None else 0
    kept: list[DirectoryEntry] = []
    scanned = 0
    last: str | None = None
    while at < len(ids) and len(kept) < limit and scanned < SCAN:
        chunk = ids[at:at + min(_CHUNK, SCAN - scanned)]
        entries = {e.table_id: e for e in await backend.entries_of(chunk)}
        for table_id in chunk:
            at += 1
            scanned += 1
            last = table_id
            entry = entries.get(table_id)
            if entry is not None and keep(entry):
                kept.append(entry)
                if len(kept) == limit:
                    break
    more = at < len(ids)
    return kept, encode_cursor(last) if more and last is not None else None

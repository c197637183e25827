"""Private tables' invite codes (docs/api.md, "Private tables").

A private table is listed to nobody and joined with its invite code. The code is a
secret, and a table's events are not: anyone may read them (a hand file, an audit
replay, ``mighty log``) once a hand has ended. So the table records only the code's
sha256 (``CreateTable.invite_hash``, domain/table.py); the code itself is never stored:

- the gateway *derives* it, ``HMAC-SHA256(the gateway secret, "invite:" + table id)``,
  128 bits in URL-safe base64: every gateway derives the same code, and derives it again
  whenever the table's creator reads the table (``invite`` in its Table);
- a join's code is checked against the hash the table recorded, in constant time. The
  code holds 128 random-looking bits, so its unsalted hash gives nothing to guess from.

Only the creator's Table shows the code; a player seated at the table, or coming back to
a seat kept for them (a rematch), needs none.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Final

from domain.table import TableState
from services.app.errors import Refused

INVITE_MAX: Final = 64  # characters of a code a join may send (a code is 22)


def invite_code(secret: bytes, table_id: str) -> str:
    """The invite code of ``table_id`` (the same on every gateway sharing ``secret``)."""
    digest = hmac.new(secret, b"invite:" + table_id.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:16]).decode().rstrip("=")


def invite_hash(code: str) -> str:
    """What the table records of its code: the sha256, in hex."""
    return hashlib.sha256(code.encode()).hexdigest()


def shown_invite(secret: bytes, table_id: str, recorded: str | None) -> str | None:
    """The code to show the creator of a table that recorded ``recorded`` (None: a
    public table, or a code this deployment's secret no longer makes)."""
    if recorded is None:
        return None
    code = invite_code(secret, table_id)
    return code if hmac.compare_digest(invite_hash(code), recorded) else None


def check_invite(state: TableState, player: str, given: str | None) -> None:
    """403 ``invite_required`` unless ``player`` may take a seat at the table: any table
    but a private one; at a private one, its creator, a player seated there already, or
    one who gives the code."""
    if state.invite_hash is None or player == state.created_by or player in state.seats:
        return
    if given is not None and hmac.compare_digest(invite_hash(given), state.invite_hash):
        return
    raise Refused("invite_required", "This table is private: join it with its invite code "
                  "(the link its creator shares)." if given is None else
                  "This invite code is not the table's: ask its creator for the link again.")

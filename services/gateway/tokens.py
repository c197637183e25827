"""Player tokens, signed by the server's secret (docs/gateway.md, Auth; docs/accounts.md).

- A guest's token: ``<player>.<expiry>.<signature>``, the signature an HMAC-SHA256 of
  ``<player>.<expiry>``. It needs no lookup to check beyond the player's record saying it
  is still a guest (an account's guest tokens stop working: docs/accounts.md).
- An account's access token: ``<player>.<session>.<expiry>.<signature>``, the HMAC over
  ``<player>.<session>.<expiry>``. It lives minutes, and its session must still exist in
  Redis (logging out deletes it), which every gateway checks (``services/gateway/accounts.py``).

A token is checked for its one spelling before any work, then its signature, then its
expiry; ``check`` answers the ``Bearer`` it names.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

import msgspec

# The one spelling ``issue`` writes: a player id, the expiry in decimal ASCII digits with
# no leading zero (12 digits last until the year 33658), the unpadded base64url of a
# 32-byte HMAC (43 characters). Anything else is refused before any work.
_TOKEN = re.compile(r"([A-Za-z0-9_-]{1,64})\.([1-9][0-9]{0,11})\.([A-Za-z0-9_-]{43})", re.ASCII)
# An account's: the session id (1–32 of the same alphabet) after the player.
_SESSION_TOKEN = re.compile(r"([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{1,32})\.([1-9][0-9]{0,11})\.([A-Za-z0-9_-]{43})",
                            re.ASCII)
MAX_TOKEN = 64 + 1 + 32 + 1 + 12 + 1 + 43


class BadToken(Exception):
    """A token that is missing, malformed, forged or expired."""


class Bearer(msgspec.Struct, frozen=True):
    """Who a token speaks for: the player, and the account's session (None: a guest's token)."""

    player: str
    session: str | None = None


def _signature(secret: bytes, signed: str) -> str:
    mac = hmac.new(secret, signed.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def issue(secret: bytes, player: str, expires: int) -> str:
    """A guest's token."""
    return f"{player}.{expires}.{_signature(secret, f'{player}.{expires}')}"


def issue_session(secret: bytes, player: str, session: str, expires: int) -> str:
    """An account's access token for ``session``."""
    signed = f"{player}.{session}.{expires}"
    return f"{signed}.{_signature(secret, signed)}"


def bearer(secret: bytes, token: str, now: float) -> Bearer:
    """The token's ``Bearer``; ``BadToken`` unless it is well formed, signed by ``secret``
    and not expired at ``now`` (seconds since the epoch). Whether its session still
    exists is the caller's to ask (Redis)."""
    if len(token) > MAX_TOKEN:
        raise BadToken("The token is not one this server issues.")
    guest = _TOKEN.fullmatch(token)
    if guest is not None:
        player, expires, signature = guest.groups()
        session = None
        signed = f"{player}.{expires}"
    else:
        account = _SESSION_TOKEN.fullmatch(token)
        if account is None:
            raise BadToken("The token is not one this server issues.")
        player, session, expires, signature = account.groups()
        signed = f"{player}.{session}.{expires}"
    if not hmac.compare_digest(signature, _signature(secret, signed)):
        raise BadToken("The token's signature does not match: it was not issued here.")
    if int(expires) <= now:
        raise BadToken("The token has expired: refresh it (an account) or create a player again (a guest).")
    return Bearer(player, session)


def check(secret: bytes, token: str, now: float) -> str:
    """The player of a well-formed, signed, unexpired token (``bearer``)."""
    return bearer(secret, token, now).player

"""Player tokens: ``<player>.<expiry>.<signature>``, the signature an HMAC-SHA256 of the
player id and expiry under the server's secret (docs/gateway.md, Auth). A token needs
no lookup to check, so any gateway of the deployment checks any token."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

_PLAYER = re.compile(r"[A-Za-z0-9_-]{1,64}")


class BadToken(Exception):
    """A token that is missing, malformed, forged or expired."""


def _signature(secret: bytes, player: str, expires: int) -> str:
    mac = hmac.new(secret, f"{player}.{expires}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def issue(secret: bytes, player: str, expires: int) -> str:
    return f"{player}.{expires}.{_signature(secret, player, expires)}"


def check(secret: bytes, token: str, now: float) -> str:
    """The token's player; ``BadToken`` unless it is well formed, signed by ``secret``
    and not expired at ``now`` (seconds since the epoch)."""
    player, _, rest = token.partition(".")
    expires, _, signature = rest.partition(".")
    if not (_PLAYER.fullmatch(player) and expires.isdigit() and signature):
        raise BadToken("The token is not one this server issues.")
    if not hmac.compare_digest(signature, _signature(secret, player, int(expires))):
        raise BadToken("The token's signature does not match: it was not issued here.")
    if int(expires) <= now:
        raise BadToken("The token has expired: create a player again for a new one.")
    return player

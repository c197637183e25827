"""Accounts: sign up, log in, refresh, log out, delete (docs/accounts.md).

The routes of ``/api/v1/accounts`` and ``/api/v1/sessions``, and ``authenticate``, which
every route that acts as a player calls (services/gateway/app.py) to turn a token into its
player: the token's spelling, signature and expiry (``tokens.bearer``, no I/O), then
whether its session still exists (``AccountStore.alive``, one Redis read, remembered a
moment).

An account's token is short-lived (``access_ttl_s``, 15 minutes); a client keeps the
session's refresh token and trades it for a new access token at
``POST /api/v1/sessions/refresh``. Logging out ends the session: its tokens stop working
on every gateway (``session_cache_s`` at most, elsewhere).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
import unicodedata
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Final

import msgspec
import structlog
from litestar.connection import ASGIConnection

from services.gateway import passwords, tokens
from services.gateway.errors import ApiError
from services.gateway.names import name_problem

if TYPE_CHECKING:  # the backend and settings are given by the caller (a route's injected ones)
    from services.gateway.backend import Backend
    from services.settings import Settings

log = structlog.get_logger("mighty.gateway")

ACCOUNT_NAME_MIN: Final = 3
ACCOUNT_NAME_MAX: Final = 24
ANONYMOUS: Final = "Deleted player"  # a deleted account's name wherever its past hands show it
MOST_SESSIONS: Final = 32  # an account's sessions at once (one per device or browser): the oldest go
# <player>.<session>.<secret>: the secret is 32 random bytes, unpadded base64url
REFRESH_TOKEN = re.compile(r"([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]{43})", re.ASCII)

AccountName = Annotated[str, msgspec.Meta(min_length=ACCOUNT_NAME_MIN, max_length=ACCOUNT_NAME_MAX)]
# characters first (the JSON schema's bound), then UTF-8 bytes in code (passwords.py)
Password = Annotated[str, msgspec.Meta(max_length=passwords.PASSWORD_MAX_BYTES)]
RefreshToken = Annotated[str, msgspec.Meta(max_length=64 + 1 + 32 + 1 + 43)]


class NewAccount(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: AccountName
    password: Password


class Login(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(max_length=64)]  # any length is looked up; none longer exists
    password: Password


class Refresh(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    refresh: RefreshToken


class Session(msgspec.Struct, frozen=True):
    """A session's tokens: ``token`` acts (until ``expires``), ``refresh`` gets the next one."""

    player: str
    name: str
    token: str
    refresh: str
    expires: str  # ISO 8601 UTC: when ``token`` stops working (refresh before)


# ---------------------------------------------------------------- names and tokens


def fold(name: str) -> str:
    """The form two names share when they are the same account's name: compatibility
    characters as their plain ones (NFKC: a full-width "Ａｎａ" is "Ana"), case folded."""
    return unicodedata.normalize("NFKC", name).casefold()


def account_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be an account's; None if it can."""
    if len(name) < ACCOUNT_NAME_MIN:
        return f"an account's name is {ACCOUNT_NAME_MIN} to {ACCOUNT_NAME_MAX} characters, not {len(name)}"
    if name != name.strip():
        return "an account's name neither starts nor ends with a space"
    return name_problem(name, ACCOUNT_NAME_MAX)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def header_token(connection: ASGIConnection[Any, Any, Any, Any]) -> str | None:
    """The ``Authorization: Bearer`` token; None without the header."""
    header = connection.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if not header:
        return None
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError("unauthorized", "The Authorization header is not 'Bearer <token>'.")
    return token.strip()


async def authenticate(backend: Backend, token: str | None) -> tokens.Bearer:
    """The player (and session) a token speaks for; 401 ``unauthorized`` unless it is
    well formed, signed here, unexpired and its session not ended."""
    if not token:
        raise ApiError("unauthorized", "This call needs a player's token: Authorization: Bearer <token>.")
    try:
        bearer = tokens.bearer(await backend.secret(), token, time.time())
    except tokens.BadToken as bad:
        raise ApiError("unauthorized", str(bad)) from None
    if not await backend.accounts.alive(bearer):
        raise ApiError("unauthorized", "This token's session has ended (logged out, or the guest became an "
                       "account): log in again.")
    return bearer


async def open_session(backend: Backend, settings: Settings, player: str, name: str) -> Session:
    """A new session of the account: its refresh token stored as a digest."""
    session, secret = secrets.token_urlsafe(12), secrets.token_urlsafe(32)
    await backend.accounts.open_session(player, session, digest(secret), settings.session_ttl_s, MOST_SESSIONS)
    return await session_tokens(backend, settings, player, name, session, f"{player}.{session}.{secret}")


async def session_tokens(backend: Backend, settings: Settings, player: str, name: str, session: str,
                         refresh: str) -> Session:
    """A session's access token (short-lived) beside its refresh token."""
    expires = int(time.time()) + settings.access_ttl_s
    token = tokens.issue_session(await backend.secret(), player, session, expires)
    return Session(player=player, name=name, token=token, refresh=refresh,
                   expires=datetime.fromtimestamp(expires, UTC).isoformat().replace("+00:00", "Z"))


# ---------------------------------------------------------------- routes

"""Accounts and their sessions (docs/accounts.md; docs/api.md, "Accounts"): the routes;
the names, passwords, tokens and sessions themselves are ``services/gateway/accounts.py``'s."""

from __future__ import annotations

from typing import Any

import structlog
from litestar import Controller, Request, delete, post
from litestar.params import JSONBody

from services.gateway import accounts, passwords, quotas
from services.gateway.accounts import (
    ANONYMOUS,
    REFRESH_TOKEN,
    Login,
    NewAccount,
    Refresh,
    Session,
    account_name_problem,
    digest,
    fold,
    header_token,
)
from services.gateway.deps import BackendDep, SettingsDep, bearer_of, note
from services.gateway.errors import ApiError

log = structlog.get_logger("mighty.gateway")


def _taken(name: str) -> ApiError:
    return ApiError("name_taken", f"The name {name!r} is taken (names differ by more than case); choose another.")


class AccountsController(Controller):
    """An account: made (a guest's token: the guest becomes it), deleted."""

    path = "/accounts"

    @post("/", status_code=201, summary="Create an account (a guest's token: the guest becomes it)")
    async def create_account(self, backend: BackendDep, settings: SettingsDep, request: Request[Any, Any, Any], data: JSONBody[NewAccount]) -> Session:
        wrong = account_name_problem(data.name) or passwords.password_problem(data.password)
        if wrong:
            raise ApiError("invalid_request", f"Not an account: {wrong}.")
        token = header_token(request)
        guest = await bearer_of(request, backend, token) if token else None
        if guest is not None and guest.session is not None:
            raise ApiError("already_an_account", "You are logged in to an account already; log out to create another.")
        address, folded = quotas.client_address(request), fold(data.name)
        await quotas.admit_login(backend, settings, address, folded)
        if guest is None:
            await quotas.admit_player(backend, settings, address)
        if await backend.accounts.holder(folded) is not None:  # before the costly hash; HSETNX decides
            raise _taken(data.name)
        password_hash = await passwords.hash_password(data.password)
        player = guest.player if guest is not None else (await backend.create_player(data.name)).player
        if not await backend.accounts.claim_name(folded, player):
            raise _taken(data.name)
        try:
            made = await backend.accounts.make_account(player, data.name, password_hash)
        except BaseException:
            await backend.accounts.release_name(folded, player)
            raise
        if made != 1:
            await backend.accounts.release_name(folded, player)
            raise ApiError("already_an_account", "This player is an account already (or was one, deleted).")
        backend.accounts.forget(player)  # its guest token stops here at once (elsewhere: session_cache_s)
        log.info("account_created", player=player, upgraded=guest is not None)
        return await accounts.open_session(backend, settings, player, data.name)

    @delete("/me", status_code=204, summary="Delete the caller's account; its past hands stay, anonymous")
    async def delete_account(self, backend: BackendDep, request: Request[Any, Any, Any]) -> None:
        bearer = await bearer_of(request, backend, header_token(request))
        if bearer.session is None:
            raise ApiError("not_an_account", "A guest has no account to delete.")
        accounts = backend.accounts
        name = await accounts.delete_account(bearer.player, ANONYMOUS)
        await accounts.end_all(bearer.player)
        if name is not None:
            await accounts.release_name(fold(name), bearer.player)
            log.info("account_deleted", player=bearer.player)


class SessionsController(Controller):
    """An account's sessions: logged in, refreshed, logged out."""

    path = "/sessions"

    @post("/", status_code=200, summary="Log in to an account")
    async def log_in(self, backend: BackendDep, settings: SettingsDep, request: Request[Any, Any, Any], data: JSONBody[Login]) -> Session:
        folded = fold(data.name)
        await quotas.admit_login(backend, settings, quotas.client_address(request), folded)
        player = await backend.accounts.holder(folded)
        found = await backend.accounts.credentials(player) if player is not None else None
        # an unknown name is verified against a fixed hash: the same answer, in about the same time
        if not await passwords.verify(found.password if found else None, data.password) or found is None:
            raise ApiError("bad_credentials", "No account has that name and password.")
        if passwords.needs_rehash(found.password):
            await backend.accounts.set_password(found.player, await passwords.hash_password(data.password))
        note(request, player=found.player)
        return await accounts.open_session(backend, settings, found.player, found.name)

    @post("/refresh", status_code=200, summary="A new access token for a session's refresh token")
    async def refresh(self, backend: BackendDep, settings: SettingsDep, request: Request[Any, Any, Any], data: JSONBody[Refresh]) -> Session:
        spelled = REFRESH_TOKEN.fullmatch(data.refresh)
        if spelled is None:
            raise ApiError("unauthorized", "The refresh token is not one this server issues.")
        player, session, secret = spelled.groups()
        # the digests compared in Redis: the secret is 256 random bits and only its SHA-256 is
        # stored, so neither a stolen key's value nor the comparison's timing gives a token
        if not await backend.accounts.extend_session(player, session, digest(secret), settings.session_ttl_s):
            raise ApiError("unauthorized", "This session has ended (logged out or expired): log in again.")
        found = await backend.accounts.credentials(player)
        if found is None:  # deleted meanwhile
            await backend.accounts.end_all(player)
            raise ApiError("unauthorized", "This account no longer exists.")
        return await accounts.session_tokens(backend, settings, player, found.name, session, data.refresh)

    @delete("/", status_code=204, summary="Log out: the caller's token and session stop working everywhere")
    async def log_out(self, backend: BackendDep, request: Request[Any, Any, Any]) -> None:
        bearer = await bearer_of(request, backend, header_token(request))
        if bearer.session is None:
            raise ApiError("not_an_account", "A guest's token has no session to end; a client forgets it to leave.")
        await backend.accounts.end_session(bearer.player, bearer.session)

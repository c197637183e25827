"""Refusals to HTTP, in one place (docs/api.md, "Conventions"): every non-2xx body is
``{"code", "message"}``, with the status the API's table gives the code."""

from __future__ import annotations

from typing import Any, Final

import msgspec
import redis
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, NotFoundException, ValidationException

from domain.errors import MightyError, RuleError
from services.gateway import language
from services.gateway.language import refusal_message
from services.i18n.catalogs import DEFAULT
from services.store.cluster import CLUSTER_UNAVAILABLE
from services.store.errors import (
    StoreError,
    StoreUnavailable,
    VersionConflict,
    is_connection_torn_down,
    is_transient,
    unavailable,
)

log = structlog.get_logger("mighty.gateway")

STATUS_OF: Final[dict[str, int]] = {
    "unauthorized": 401, "bad_credentials": 401,
    "not_your_seat": 403, "hand_in_progress": 403, "hints_off": 403, "not_allowed": 403, "not_an_account": 403,
    "reputation_too_low": 403, "invite_required": 403,
    "unknown_table": 404, "unknown_player": 404, "unknown_hand": 404, "not_found": 404,
    "seat_taken": 409, "table_full": 409, "table_started": 409, "table_closed": 409,
    "already_seated": 409, "table_exists": 409, "command_id_reused": 409,
    "name_taken": 409, "already_an_account": 409,  # accounts (services/gateway/accounts.py)
    "too_large": 413,
    "unsupported_media_type": 415,
    "rate_limited": 429,
    # quotas (services/gateway/quotas.py, sockets.py)
    "too_many_players": 429, "too_many_tables": 429, "too_many_quickplays": 429, "too_many_seats": 429,
    "too_many_sockets": 429, "too_many_logins": 429,
    "unavailable": 503,
}
# A store's own codes as the API names them.
_STORE_CODES: Final = {"bad_table_id": "unknown_table", "bad_command_id": "invalid_request",
                       "payload_too_large": "too_large", "store_unavailable": "unavailable",
                       "version_conflict": "unavailable"}


class ApiError(Exception):
    """A refusal the gateway itself makes (auth, lookups, lobby rules)."""

    def __init__(self, code: str, message: str, *, status: int | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status if status is not None else STATUS_OF.get(code, 422)
        self.headers = headers or {}


def problem(code: str, message: str, lang: str = DEFAULT) -> dict[str, str]:
    """A refusal's body, its message in the reader's ``lang`` (``language.py``)."""
    return {"code": code, "message": refusal_message(code, message, lang)}


def as_api_error(error: Exception) -> ApiError:
    """The API's answer to any refusal, from the rules, the store or the gateway."""
    if isinstance(error, ApiError):
        return error
    if isinstance(error, StoreUnavailable | VersionConflict):
        return ApiError("unavailable", f"{error.message} Retry with the same command id.")
    if isinstance(error, StoreError):
        code = _STORE_CODES.get(error.code, error.code)
        return ApiError(code, error.message, status=STATUS_OF.get(code, 422 if code != "store_corrupt" else 500))
    if isinstance(error, RuleError | MightyError):
        return ApiError(error.code, error.message)  # rules codes: 422; lobby conflicts: their own
    if isinstance(error, (redis.RedisError, *CLUSTER_UNAVAILABLE)):
        if is_transient(error):  # loading, unable to persist, out of memory, failing over...
            return ApiError("unavailable", f"{unavailable(error).message}. Retry with the same command id.")
        log.error("redis_refused", error=str(error)[:300], kind=type(error).__name__)
        return ApiError("internal", "The server failed; it has been logged.", status=500)
    if is_connection_torn_down(error):  # redis-py tripping on a connection a failover closed
        return ApiError("unavailable", f"{unavailable(error).message}. Retry with the same command id.")
    raise TypeError(error)


def _response(error: ApiError, request: Request[Any, Any, Any]) -> Response[Any]:
    return Response(problem(error.code, error.message, language.of(request)), status_code=error.status,
                    headers=error.headers)


def on_refusal(request: Request[Any, Any, Any], error: Exception) -> Response[Any]:
    return _response(as_api_error(error), request)


def on_http_error(request: Request[Any, Any, Any], error: Exception) -> Response[Any]:
    """Litestar's own refusals (an unknown route, a body that does not decode, too large)."""
    assert isinstance(error, HTTPException)
    status = error.status_code
    if isinstance(error, ValidationException):
        detail = error.extra if error.extra else error.detail
        return _response(ApiError("invalid_request", f"The request is not valid: {_short(detail)}", status=422),
                         request)
    if status == 413:
        return _response(ApiError("too_large", "The body is over 16 KiB.", status=413), request)
    if isinstance(error, NotFoundException) or status == 404:
        return _response(ApiError("not_found", f"There is no {_short(request.url.path)}.", status=404), request)
    if status == 405:
        return _response(ApiError("method_not_allowed", f"{request.method} is not allowed here.", status=405),
                         request)
    if status >= 500:
        log.error("server_error", path=request.url.path, detail=str(error.detail))
        return _response(ApiError("internal", "The server failed; it has been logged.", status=status), request)
    return _response(ApiError("invalid_request", str(error.detail), status=status), request)


def on_unexpected(request: Request[Any, Any, Any], error: Exception) -> Response[Any]:
    if is_connection_torn_down(error):
        return on_refusal(request, error)
    log.exception("server_error", path=request.url.path)
    return _response(ApiError("internal", "The server failed; it has been logged.", status=500), request)


def _short(detail: object) -> str:
    text = detail if isinstance(detail, str) else msgspec.json.encode(detail).decode()
    return text if len(text) <= 300 else text[:297] + "..."


EXCEPTION_HANDLERS: Final = {
    ApiError: on_refusal,
    MightyError: on_refusal,
    # every Redis error: an outage (LOADING, MISCONF, OOM, READONLY...) is 503
    # ``unavailable`` (``is_transient``), anything else the 500 it is
    redis.RedisError: on_refusal,
    # a cluster failing over, or a slot without a primary for now
    redis.exceptions.SlotNotCoveredError: on_refusal,
    redis.exceptions.ClusterDownError: on_refusal,
    redis.exceptions.TryAgainError: on_refusal,
    HTTPException: on_http_error,
    Exception: on_unexpected,
}

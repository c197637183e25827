"""Refusals to HTTP, in one place (API.md, Conventions): every non-2xx body is
``{"code", "message"}``, with the status the API's table gives the code."""

from __future__ import annotations

from typing import Any, Final

import msgspec
import redis
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, NotFoundException, ValidationException

from domain.errors import MightyError, RuleError
from services.store.cluster import CLUSTER_UNAVAILABLE
from services.store.errors import StoreError, StoreUnavailable, VersionConflict

log = structlog.get_logger("mighty.gateway")

STATUS_OF: Final[dict[str, int]] = {
    "unauthorized": 401,
    "not_your_seat": 403, "hand_in_progress": 403,
    "unknown_table": 404, "unknown_player": 404, "unknown_hand": 404, "not_found": 404,
    "seat_taken": 409, "table_full": 409, "table_started": 409, "table_closed": 409,
    "already_seated": 409, "table_exists": 409, "command_id_reused": 409,
    "too_large": 413,
    "rate_limited": 429,
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


def problem(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}


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
    if isinstance(error, (redis.ConnectionError, redis.TimeoutError, *CLUSTER_UNAVAILABLE)):
        return ApiError("unavailable", f"The store cannot be reached: {error}. Retry with the same command id.")
    raise TypeError(error)


def _response(error: ApiError) -> Response[Any]:
    return Response(problem(error.code, error.message), status_code=error.status, headers=error.headers)


def on_refusal(_: Request[Any, Any, Any], error: Exception) -> Response[Any]:
    return _response(as_api_error(error))


def on_http_error(request: Request[Any, Any, Any], error: Exception) -> Response[Any]:
    """Litestar's own refusals (an unknown route, a body that does not decode, too large)."""
    assert isinstance(error, HTTPException)
    status = error.status_code
    if isinstance(error, ValidationException):
        detail = error.extra if error.extra else error.detail
        return _response(ApiError("invalid_request", f"The request is not valid: {_short(detail)}", status=422))
    if status == 413:
        return _response(ApiError("too_large", "The body is over 16 KiB.", status=413))
    if isinstance(error, NotFoundException) or status == 404:
        return _response(ApiError("not_found", f"There is no {request.url.path}.", status=404))
    if status == 405:
        return _response(ApiError("method_not_allowed", f"{request.method} is not allowed here.", status=405))
    if status >= 500:
        log.error("server_error", path=request.url.path, detail=str(error.detail))
        return _response(ApiError("internal", "The server failed; it has been logged.", status=status))
    return _response(ApiError("invalid_request", str(error.detail), status=status))


def on_unexpected(request: Request[Any, Any, Any], error: Exception) -> Response[Any]:
    log.exception("server_error", path=request.url.path)
    return _response(ApiError("internal", "The server failed; it has been logged.", status=500))


def _short(detail: object) -> str:
    text = detail if isinstance(detail, str) else msgspec.json.encode(detail).decode()
    return text if len(text) <= 300 else text[:297] + "..."


EXCEPTION_HANDLERS: Final = {
    ApiError: on_refusal,
    MightyError: on_refusal,
    redis.ConnectionError: on_refusal,
    redis.TimeoutError: on_refusal,
    # a cluster failing over, or a slot without a primary for now
    redis.exceptions.SlotNotCoveredError: on_refusal,
    redis.exceptions.ClusterDownError: on_refusal,
    redis.exceptions.TryAgainError: on_refusal,
    HTTPException: on_http_error,
    Exception: on_unexpected,
}

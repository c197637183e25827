"""Schemathesis against the gateway's own OpenAPI document, in process over fakeredis:
generated requests to every route, bounded in count, and none answers 5xx; then every
route of the document with what generation does not reach: odd tokens in the
Authorization header (another spelling of a real token, non-ASCII digits, 5,000 digits)
and bodies nested a thousand levels deep (issue "Open to strangers", item 4). Part of
``make test`` (the README's test command, which ``.ci/run`` runs): under a minute."""

from __future__ import annotations

from typing import Any

import fakeredis
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from litestar.testing import TestClient
from schemathesis.checks import not_a_server_error

from services.bootstrap import wire_gateway
from services.gateway.app import create_app
from services.settings import Settings

DEEP = 1000  # levels: Python's recursion limit

_server = fakeredis.FakeServer()
_settings = Settings(partitions=2, secret="schema-secret", rate_commands=100_000)
_backend = wire_gateway(fakeredis.FakeAsyncRedis(server=_server, protocol=2), _settings)
APP = create_app(_settings, _backend)
with TestClient(APP) as _client:  # a player whose token the generated calls carry
    _made = _client.post("/api/v1/players", json={"name": "Schema"}).json()
    _TOKEN, _PLAYER = _made["token"], _made["player"]
    _TABLE = _client.post("/api/v1/tables", json={"seat": 0},
                          headers={"Authorization": f"Bearer {_TOKEN}"}).json()["table"]

# /readyz answers 503 by contract while no projection worker runs (none does here)
schema = schemathesis.openapi.from_asgi("/schema/openapi.json", APP).exclude(path="/readyz")


@schema.parametrize()
@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_generated_request_makes_the_gateway_answer_5xx(case: Any) -> None:
    if case.path == "/api/v1/quickplay":
        case.body = {"game": "mighty-5", "wait_seconds": 0}  # bounded: no real wait in a property test
    case.call_and_validate(headers={"Authorization": f"Bearer {_TOKEN}"}, checks=[not_a_server_error])


OPERATIONS = [result.ok() for result in schema.get_all_operations()]
PATH_PARAMETERS = {"table": _TABLE, "player": _PLAYER, "n": 1, "lang": "ko", "game": "mighty-5"}


def odd_tokens(token: str) -> list[str]:
    player, expires, signature = token.split(".")
    return [f"{player}.0{expires}.{signature}", f"{player}.{expires[:-1]}\u0663.{signature}",
            f"{player}.{expires[:-1]}\u00b2.{signature}", f"{player}.{'9' * 5000}.{signature}",
            f"{player}.{expires}.{signature}==", f"{player}.-{expires}.{signature}", "." * 3, "\x00"]


def _case(operation: Any) -> Any:
    parameters = {p.name: PATH_PARAMETERS[p.name] for p in operation.iter_parameters() if p.location == "path"}
    has_body = bool(list(operation.get_request_payload_content_types()))
    return operation.Case(path_parameters=parameters, **({"body": {}} if has_body else {}))


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: f"{op.method.upper()} {op.path}")
def test_odd_tokens_in_the_authorization_header_are_never_a_server_error(operation: Any) -> None:
    for odd in odd_tokens(_TOKEN):
        case = _case(operation)
        # a header is bytes on the wire: latin-1 where it can say the token, else UTF-8
        header = f"Bearer {odd}".encode("latin-1", errors="ignore").decode("latin-1")
        response = case.call(headers={"Authorization": header})
        assert response.status_code < 500, (odd[:40], response.text)
        if operation.path != "/api/v1/players" and operation.method == "post":
            assert response.status_code in (401, 415, 422), (odd[:40], response.text)


BODY_OPERATIONS = [op for op in OPERATIONS if list(op.get_request_payload_content_types())]


@pytest.mark.parametrize("operation", BODY_OPERATIONS, ids=lambda op: f"{op.method.upper()} {op.path}")
def test_a_body_nested_a_thousand_levels_is_invalid_request(operation: Any) -> None:
    path = operation.path.format(**PATH_PARAMETERS)
    for deep in ("[" * DEEP + "]" * DEEP, '{"name": ' + "{\"a\": " * DEEP + "1" + "}" * DEEP + "}"):
        with TestClient(APP) as client:
            response = client.request(operation.method.upper(), path, content=deep, headers={
                "Authorization": f"Bearer {_TOKEN}", "Content-Type": "application/json"})
        assert response.status_code == 422 and response.json()["code"] == "invalid_request", response.text

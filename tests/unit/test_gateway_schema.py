"""Schemathesis against the gateway's own OpenAPI document, in process over fakeredis:
generated requests to every route, bounded in count, and none answers 5xx."""

from __future__ import annotations

from typing import Any

import fakeredis
import schemathesis
from hypothesis import HealthCheck, settings
from litestar.testing import TestClient
from schemathesis.checks import not_a_server_error

from services.bootstrap import wire_gateway
from services.gateway.app import create_app
from services.settings import Settings

_server = fakeredis.FakeServer()
_settings = Settings(partitions=2, secret="schema-secret", rate_commands=100_000)
_backend = wire_gateway(fakeredis.FakeAsyncRedis(server=_server, protocol=2), _settings)
APP = create_app(_settings, _backend)
with TestClient(APP) as _client:  # a player whose token the generated calls carry
    _TOKEN = _client.post("/api/v1/players", json={"name": "Schema"}).json()["token"]
    _client.post("/api/v1/tables", json={"seat": 0}, headers={"Authorization": f"Bearer {_TOKEN}"})

# /readyz answers 503 by contract while no projection worker runs (none does here)
schema = schemathesis.openapi.from_asgi("/schema/openapi.json", APP).exclude(path="/readyz")


@schema.parametrize()
@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_generated_request_makes_the_gateway_answer_5xx(case: Any) -> None:
    if case.path == "/api/v1/quickplay":
        case.body = {"game": "mighty-5", "wait_seconds": 0}  # bounded: no real wait in a property test
    case.call_and_validate(headers={"Authorization": f"Bearer {_TOKEN}"}, checks=[not_a_server_error])

"""Operations (docs/api.md, "Operations"): liveness, readiness, metrics."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import structlog
from litestar import Controller, Request, Response, get
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    generate_latest,
)

from services.gateway import (
    deadline,
)
from services.gateway.collector import Collector
from services.gateway.deps import BackendDep, SettingsDep
from services.gateway.metrics import Metrics
from services.gateway.wire import (
    Health,
)

log = structlog.get_logger("mighty.gateway")


class OperationsController(Controller):
    """Liveness, readiness and Prometheus metrics, outside ``/api/v1``."""

    path = "/"

    @get("/healthz", summary="The process runs")
    async def healthz(self) -> Health:
        return Health(ok=True)

    @get("/readyz", summary="Redis answers and the projections keep up")
    async def readyz(self, backend: BackendDep, settings: SettingsDep) -> Response[Health]:
        problems: list[str] = []
        try:
            async with asyncio.timeout(deadline.STORE_DEADLINE_S):
                await backend.ping()
                lag = await backend.lag_seconds()
            for kind, seconds in lag.items():
                if seconds > settings.max_lag_s:
                    problems.append(f"the {kind} projection is {seconds:.1f} s behind")
        except TimeoutError:
            problems.append(f"the store did not answer within {deadline.STORE_DEADLINE_S:g} s")
        except Exception as error:  # readiness reports, it never fails itself
            problems.append(f"the store cannot be reached: {error}")
        return Response(Health(ok=not problems, problems=problems), status_code=200 if not problems else 503)

    @get("/metrics", summary="Prometheus metrics", media_type=CONTENT_TYPE_LATEST)
    async def metrics_route(self, backend: BackendDep, request: Request[Any, Any, Any]) -> Response[bytes]:
        metrics: Metrics = request.app.state.metrics
        core = getattr(getattr(backend, "handler", None), "core", None)
        if core is not None:
            metrics.count_rollbacks(core.rollbacks)
            metrics.cached_tables.labels("closed").set(core.cache.closed)
            metrics.cached_tables.labels("in_play").set(len(core.cache) - core.cache.closed)
        collector: Collector = request.app.state.collector
        metrics.gc_runs.set(collector.runs)
        metrics.gc_found.set(collector.found)
        metrics.gc_seconds.set(collector.seconds)
        with contextlib.suppress(Exception):  # a scrape while Redis is down (or stalls) still answers
            async with asyncio.timeout(deadline.STORE_DEADLINE_S):
                lag = await backend.lag_seconds()
                dead = await backend.dead_letters()
            for kind, seconds in lag.items():
                metrics.lag.labels(kind).set(seconds)
            for kind, count in dead.items():
                metrics.dead.labels(kind).set(count)
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

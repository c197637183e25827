"""The gateway's Prometheus metrics (``GET /metrics``; docs/operations.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
)

if TYPE_CHECKING:
    from services.gateway.admission import Admission


class Metrics:
    """The gateway's Prometheus metrics, in a registry of its own (one per app)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.commands = Counter("mighty_commands", "Player commands by outcome", ["outcome"], registry=r)
        self.refusals = Counter("mighty_refusals", "Refused commands by code", ["code"], registry=r)
        self.latency = Histogram("mighty_command_seconds", "Time to handle a player's command",
                                 buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
                                 registry=r)
        self.lag = Gauge("mighty_projection_lag_seconds", "How far each projection is behind its feeds",
                         ["kind"], registry=r)
        self.sockets = Gauge("mighty_open_sockets", "Open WebSocket streams", registry=r)
        self.dead = Gauge("mighty_dead_letters", "Feed entries a projection kind could not decode or fold",
                          ["kind"], registry=r)
        self.requests = Counter("mighty_http_requests", "HTTP requests by status", ["status"], registry=r)
        # rollbacks (docs/reliability.md, "Rollback"): tables found holding less than this
        # gateway saw, and streams resumed from beyond their table's version
        self.rollbacks = Counter("mighty_rollbacks", "Tables found holding fewer events than this gateway "
                                 "had seen (writes lost: a power cut under everysec, a failover)", registry=r)
        self.stream_rollbacks = Counter("mighty_stream_rollbacks", "Streams resumed from a cursor beyond the "
                                        "table's version: sent the current view, marked rollback", registry=r)
        self._rollbacks_seen = 0
        # how each view reached its socket: written as it was published, or through the
        # pusher's loop (a frame that would wait, a read needed, a re-read, a rollback)
        self.views_pushed = Counter("mighty_views_pushed", "Views pushed to streams, by how: at_once (as "
                                    "published) or queued (through the pusher's loop)", ["how"], registry=r)
        # memory (docs/reliability.md, Soak): set at each scrape
        self.gc_runs = Gauge("mighty_gc_runs", "Full garbage collections run by the gateway's collector",
                             registry=r)
        self.gc_found = Gauge("mighty_gc_found_objects", "Unreachable objects the collector's runs found",
                              registry=r)
        self.gc_seconds = Gauge("mighty_gc_seconds", "Time the collector's runs took, in all", registry=r)
        self.cached_tables = Gauge("mighty_cached_tables", "Tables whose state the command path keeps, "
                                   "in play and closed", ["kind"], registry=r)

    def watch_admission(self, admission: Admission) -> None:
        """The stream starts waiting for a place, and those turned away (admission.py), read at each scrape."""
        Gauge("mighty_stream_starts_waiting", "Stream starts waiting for a place", registry=self.registry
              ).set_function(lambda: admission.queued)
        Gauge("mighty_stream_starts_turned_away", "Stream starts turned away busy (1013) since the gateway "
              "started", registry=self.registry).set_function(lambda: admission.turned_away)

    def count_rollbacks(self, found: int) -> None:
        """Bring ``mighty_rollbacks_total`` to ``found``, the command path's own count."""
        if found > self._rollbacks_seen:
            self.rollbacks.inc(found - self._rollbacks_seen)
            self._rollbacks_seen = found

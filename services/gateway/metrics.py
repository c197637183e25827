"""The gateway's Prometheus metrics (``GET /metrics``; docs/operations.md).

The three counted on every command and every push (``mighty_commands_total``,
``mighty_command_seconds``, ``mighty_views_pushed_total``) are ``Tally`` and ``Timings``:
plain numbers of the event loop's one thread, read by the registry at each scrape.
prometheus_client's own ``Counter`` and ``Histogram`` take a lock on every ``inc`` and
``observe`` (they may be shared by threads), about 1 % of a gateway's CPU at 20 tables of
the load benchmark; nothing else in the gateway counts from another thread.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
)
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

if TYPE_CHECKING:
    from services.gateway.admission import Admission


class Metrics:
    """The gateway's Prometheus metrics, in a registry of its own (one per app)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.commands = Tally("mighty_commands", "Player commands by outcome", "outcome", registry=r)
        self.refusals = Counter("mighty_refusals", "Refused commands by code", ["code"], registry=r)
        self.latency = Timings("mighty_command_seconds", "Time to handle a player's command",
                               (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5), registry=r)
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
        self.views_pushed = Tally("mighty_views_pushed", "Views pushed to streams, by how: at_once (as "
                                  "published) or queued (through the pusher's loop)", "how", registry=r)
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


class Count:
    """One label's count of a ``Tally``: ``inc`` adds to a plain number."""

    __slots__ = ("created", "value")

    def __init__(self) -> None:
        self.value = 0.0
        self.created = time.time()  # ``_created``, as prometheus_client's counters give it

    def inc(self, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("Counters can only be incremented by non-negative amounts.")
        self.value += amount


class Tally(Collector):
    """A counter with one label, counted without a lock (the event loop's thread only) and
    exported as ``<name>_total{<label>}`` at each scrape."""

    def __init__(self, name: str, documentation: str, label: str, registry: CollectorRegistry) -> None:
        self._name, self._documentation, self._label = name, documentation, label
        self._counts: dict[str, Count] = {}
        registry.register(self)

    def labels(self, value: str) -> Count:
        count = self._counts.get(value)
        if count is None:
            count = self._counts[value] = Count()
        return count

    def describe(self) -> Iterator[Metric]:
        """What the registry checks names against (another collector of the same name is refused)."""
        yield CounterMetricFamily(self._name, self._documentation, labels=[self._label])

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self._name, self._documentation, labels=[self._label])
        for value, count in list(self._counts.items()):
            family.add_metric([value], count.value, created=count.created)
        yield family


class Timings(Collector):
    """A histogram of durations in seconds, counted without a lock (as ``Tally``) and
    exported as ``<name>_bucket{le}``, ``_count`` and ``_sum`` at each scrape."""

    def __init__(self, name: str, documentation: str, buckets: Sequence[float],
                 registry: CollectorRegistry) -> None:
        self._name, self._documentation = name, documentation
        self._bounds = tuple(buckets)
        self._counts = [0] * (len(self._bounds) + 1)  # the last: above every bound (+Inf)
        self._sum = 0.0
        self._created = time.time()
        registry.register(self)

    def observe(self, seconds: float) -> None:
        self._counts[bisect.bisect_left(self._bounds, seconds)] += 1
        self._sum += seconds

    def describe(self) -> Iterator[Metric]:
        yield HistogramMetricFamily(self._name, self._documentation)

    def collect(self) -> Iterator[Metric]:
        cumulative, buckets = 0, []
        for bound, count in zip((*map(floatToGoString, self._bounds), "+Inf"), self._counts, strict=True):
            cumulative += count
            buckets.append((bound, cumulative))
        family = HistogramMetricFamily(self._name, self._documentation, buckets=buckets, sum_value=self._sum)
        family.add_sample(f"{self._name}_created", {}, self._created)
        yield family

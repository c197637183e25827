"""The gateway's lock-free counters (services/gateway/metrics.py: ``Tally``, ``Timings``)
are scraped exactly as prometheus_client's own ``Counter`` and ``Histogram`` would show
the same counts: dashboards and alerts read them by the same names and labels."""

from __future__ import annotations

import random

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from services.gateway.metrics import Metrics, Tally, Timings

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)


def _scraped(registry: CollectorRegistry) -> list[str]:
    """The exposition's lines, each ``_created`` without its value (the time its counter
    was made: another object, another moment)."""
    return [line.rpartition(" ")[0] if "_created" in line else line
            for line in generate_latest(registry).decode().splitlines()]


def test_a_tally_and_timings_scrape_as_prometheus_clients_counter_and_histogram_do() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    tally = Tally("mighty_commands", "Player commands by outcome", "outcome", registry=ours)
    timings = Timings("mighty_command_seconds", "Time to handle a player's command", BUCKETS, registry=ours)
    counter = Counter("mighty_commands", "Player commands by outcome", ["outcome"], registry=theirs)
    histogram = Histogram("mighty_command_seconds", "Time to handle a player's command", buckets=BUCKETS,
                          registry=theirs)
    rng = random.Random(7)
    # every bound itself too: a value on a bound counts in that bound's bucket (le)
    for seconds in [*BUCKETS, 0.0, 9.0, *(rng.expovariate(40) for _ in range(500))]:
        outcome = rng.choice(["ok", "refused", "error"])
        tally.labels(outcome).inc()
        counter.labels(outcome).inc()
        timings.observe(seconds)
        histogram.observe(seconds)
    assert _scraped(ours) == _scraped(theirs)


def test_a_tally_refuses_what_a_counter_refuses() -> None:
    registry = CollectorRegistry()
    tally = Tally("mighty_views_pushed", "Views pushed", "how", registry=registry)
    with pytest.raises(ValueError):
        tally.labels("at_once").inc(-1)
    with pytest.raises(ValueError):  # the registry tells the name is taken
        Counter("mighty_views_pushed", "Views pushed again", ["how"], registry=registry)
    with pytest.raises(ValueError):
        Timings("mighty_views_pushed", "a histogram of the same name", BUCKETS, registry=registry)


def test_the_gateways_metrics_count_commands_latency_and_pushes_on_its_registry() -> None:
    metrics = Metrics()
    metrics.commands.labels("ok").inc()
    metrics.commands.labels("ok").inc()
    metrics.latency.observe(0.003)
    metrics.views_pushed.labels("at_once").inc(3)
    text = "\n".join(_scraped(metrics.registry))
    assert 'mighty_commands_total{outcome="ok"} 2.0' in text
    assert 'mighty_command_seconds_bucket{le="0.005"} 1.0' in text
    assert 'mighty_command_seconds_bucket{le="0.0025"} 0.0' in text
    assert "mighty_command_seconds_count 1.0" in text
    assert 'mighty_views_pushed_total{how="at_once"} 3.0' in text

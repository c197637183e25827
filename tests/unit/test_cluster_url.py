"""A ``redis+cluster://`` REDIS_URL: what it names, what is refused and why, and that the
settings take it and the replicated durability profile beside it."""

from __future__ import annotations

import pytest

from services.settings import Settings, SettingsError, settings_from
from services.store.cluster import (
    BadClusterUrl,
    ClusterUrl,
    is_cluster_url,
    parse_cluster_url,
    url_without_password,
)


def test_a_cluster_url_names_each_node_in_order() -> None:
    parsed = parse_cluster_url("redis+cluster://127.0.0.1:7000,127.0.0.1:7001,10.0.0.9:6380")
    assert parsed == ClusterUrl(nodes=(("127.0.0.1", 7000), ("127.0.0.1", 7001), ("10.0.0.9", 6380)))


def test_a_cluster_url_carries_tls_and_credentials() -> None:
    parsed = parse_cluster_url("rediss+cluster://ops:s%40cret@cache.example:6379/0")
    assert parsed == ClusterUrl(nodes=(("cache.example", 6379),), tls=True, username="ops", password="s@cret")


def test_a_password_alone_leaves_the_user_unset() -> None:
    parsed = parse_cluster_url("redis+cluster://:hunter2@h:1")
    assert (parsed.username, parsed.password) == (None, "hunter2")


def test_an_ipv6_node_is_written_in_brackets() -> None:
    assert parse_cluster_url("redis+cluster://[::1]:7000,[fe80::2]:7001").nodes == (("::1", 7000), ("fe80::2", 7001))


@pytest.mark.parametrize(("url", "why"), [
    ("redis+cluster://127.0.0.1", "no port"),
    ("redis+cluster://127.0.0.1:0", "1..65535"),
    ("redis+cluster://127.0.0.1:70000", "1..65535"),
    ("redis+cluster://127.0.0.1:x", "1..65535"),
    ("redis+cluster://:7000", "no host"),
    ("redis+cluster://h:1,", "no port"),
    ("redis+cluster://h:1/2", "one database"),
    ("redis+cluster://h:1?timeout=3", "no query"),
    ("redis+cluster://[::1]7000", "[address]:port"),
    ("redis://h:1", "starts with redis+cluster://"),
])
def test_a_cluster_url_that_names_no_usable_node_is_refused_with_why(url: str, why: str) -> None:
    with pytest.raises(BadClusterUrl) as refused:
        parse_cluster_url(url)
    assert why in str(refused.value)


def test_only_the_cluster_schemes_are_cluster_urls() -> None:
    assert is_cluster_url("redis+cluster://h:1") and is_cluster_url("REDISS+CLUSTER://h:1")
    assert not is_cluster_url("redis://h:1/0") and not is_cluster_url("unix:///tmp/r.sock")


def test_a_logged_url_hides_its_password() -> None:
    assert url_without_password("redis+cluster://ops:s3cret@h:1,h:2") == "redis+cluster://ops:***@h:1,h:2"
    assert url_without_password("redis+cluster://h:1") == "redis+cluster://h:1"


def test_the_settings_take_a_cluster_url_and_say_what_is_wrong_with_a_bad_one() -> None:
    good = settings_from(environ={"REDIS_URL": "redis+cluster://127.0.0.1:7000,127.0.0.1:7001"})
    assert good.redis_url == "redis+cluster://127.0.0.1:7000,127.0.0.1:7001"
    with pytest.raises(SettingsError) as refused:
        settings_from(environ={"REDIS_URL": "redis+cluster://127.0.0.1"})
    assert refused.value.message.startswith("REDIS_URL=") and "no port" in refused.value.message
    with pytest.raises(SettingsError) as wrong_scheme:
        settings_from(environ={"REDIS_URL": "http://127.0.0.1:7000"})
    assert "redis+cluster://" in wrong_scheme.value.message


def test_the_replicated_profile_waits_for_one_replica_and_fsyncs_every_second() -> None:
    replicated = settings_from(environ={"MIGHTY_DURABILITY": "replicated", "MIGHTY_REPLICA_TIMEOUT_MS": "250"})
    assert (replicated.wait_replicas, replicated.replica_timeout_ms, replicated.fsync) == (1, 250, "everysec")
    assert replicated.as_env()["MIGHTY_DURABILITY"] == "replicated"
    assert replicated.as_env()["MIGHTY_REPLICA_TIMEOUT_MS"] == "250"
    assert (Settings().wait_replicas, Settings(durability="always").fsync) == (0, "always")
    with pytest.raises(SettingsError) as refused:
        settings_from(environ={"MIGHTY_REPLICA_TIMEOUT_MS": "0"})
    assert "MIGHTY_REPLICA_TIMEOUT_MS" in refused.value.message

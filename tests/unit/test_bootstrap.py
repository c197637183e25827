"""services/bootstrap.py: every part a process runs on comes from one Settings, on one
client and one key space; without a Redis URL nothing is guessed."""

from __future__ import annotations

import contextlib
from pathlib import Path

import fakeredis
import pytest

from domain.table import CreateTable, Submission
from services.bootstrap import NoStoreConfigured, bootstrap, run_redis, wire
from services.settings import Settings


def test_bootstrap_without_a_redis_url_refuses_to_guess_one() -> None:
    with pytest.raises(NoStoreConfigured) as refused:
        bootstrap(Settings())
    assert "REDIS_URL" in refused.value.message and "--redis-url" in refused.value.message


def test_every_part_shares_the_settings_namespace_and_partition_count() -> None:
    client = fakeredis.FakeRedis()
    wiring = wire(client, Settings(namespace="ns1", partitions=4))
    assert (wiring.space.namespace, wiring.space.partitions) == ("ns1", 4)
    assert wiring.store.keys is wiring.space and wiring.handler.store is wiring.store
    worker = wiring.worker("ledger", linger_ms=0)
    assert worker.store is wiring.projection_store("ledger")
    assert worker.keys.space is wiring.space and worker.keys.partitions == 4
    assert wiring.readers.space is wiring.space


def test_a_command_through_the_handler_lands_under_the_settings_namespace() -> None:
    client = fakeredis.FakeRedis()
    wiring = wire(client, Settings(namespace="ns2", partitions=2))
    wiring.handler.handle("t1", Submission(CreateTable(), "ana"), command_id="c1")
    keys = {key.decode() for key in client.keys("*")}
    assert keys and all(key.startswith("ns2:") for key in keys)
    assert wire(client, Settings(namespace="other", partitions=2)).store.table_ids() == []
    assert wiring.store.table_ids() == ["t1"]


def test_run_redis_keeps_a_given_url(tmp_path: Path) -> None:
    with contextlib.ExitStack() as stack:
        settings, redis_ = run_redis(Settings(redis_url="redis://example.invalid:1/0"), stack)
    assert (settings.redis_url, redis_.kind) == ("redis://example.invalid:1/0", "given")


def test_run_redis_without_redis_server_starts_the_embedded_one(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no redis-server to be found
    with contextlib.ExitStack() as stack:
        settings, redis_ = run_redis(Settings(), stack)
        assert redis_.kind == "embedded" and settings.redis_url == redis_.url
        assert bootstrap(settings).client.ping()


def test_the_async_wiring_shares_the_settings_and_its_commands_land_where_the_sync_one_reads() -> None:
    import asyncio

    from services.bootstrap import bootstrap_gateway, wire_async

    with pytest.raises(NoStoreConfigured):
        bootstrap_gateway(Settings())
    server = fakeredis.FakeServer()
    settings = Settings(namespace="ns3", partitions=4, idempotency_s=60.0)

    async def scenario() -> int:
        wiring = wire_async(fakeredis.FakeAsyncRedis(server=server, protocol=2), settings)
        assert (wiring.space.namespace, wiring.space.partitions) == ("ns3", 4)
        assert wiring.store.keys is wiring.space and wiring.handler.store is wiring.store
        assert wiring.readers.space is wiring.space and wiring.store.idempotency_ms == 60_000
        result = await wiring.handler.handle("t1", Submission(CreateTable(), "ana"), command_id="c1")
        await wiring.close()
        return result.version

    version = asyncio.run(scenario())
    sync = wire(fakeredis.FakeRedis(server=server, protocol=2), settings)
    assert sync.store.table_ids() == ["t1"] and sync.store.head("t1").version == version == 1

"""The sockets quotas are every gateway's together (services/gateway/sockets.py,
``SharedSockets``; docs/gateway.md, *Quotas*): two gateways' backends on one real Redis."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from services.bootstrap import bootstrap_gateway
from services.gateway.errors import ApiError
from services.gateway.sockets import SharedSockets
from services.settings import Settings

pytestmark = pytest.mark.integration

TTL_S = 1.5


async def _refused(take: Any, who: str) -> None:
    with pytest.raises(ApiError) as refused:
        await take
    assert (refused.value.code, refused.value.status) == ("too_many_sockets", 429)
    assert who in refused.value.message


async def _until_released(sockets: SharedSockets) -> None:
    while sockets._releases:  # the background uncounts have run
        await asyncio.sleep(0.01)


def test_sockets_on_two_gateways_count_against_one_quota_and_a_dead_gateways_run_out(redis_server: Any) -> None:
    settings = Settings(redis_url=redis_server.url)

    async def course() -> None:
        one, two = bootstrap_gateway(settings), bootstrap_gateway(settings)
        first = SharedSockets(per_address=3, per_player=2, ttl_s=TTL_S)
        second = SharedSockets(per_address=3, per_player=2, ttl_s=TTL_S)
        try:
            await first.take(one, "198.51.100.7", "p1")
            held_elsewhere = await second.take(two, "198.51.100.7", "p1")
            await _refused(first.take(one, "198.51.100.7", "p1"), "player")  # its third, on either gateway
            spectator = await second.take(two, "198.51.100.7", None)  # the address's third
            await _refused(first.take(one, "198.51.100.7", None), "address")
            await _refused(first.take(one, "203.0.113.9", "p1"), "player")  # another address, the same player
            second.give_back(two, held_elsewhere)
            await _until_released(second)
            await first.take(one, "198.51.100.7", "p1")  # the slot given back is free at once
            assert spectator in second._held
            # the second gateway dies (its sockets are no longer renewed); the first lives on
            keeper = asyncio.create_task(first.keep(one))
            started = time.monotonic()
            await asyncio.sleep(TTL_S * 1.4)
            await first.take(one, "198.51.100.7", None)  # the dead gateway's slot ran out
            await _refused(first.take(one, "198.51.100.7", None), "address")  # the renewed ones did not
            assert time.monotonic() - started < TTL_S * 3
            keeper.cancel()
        finally:
            await one.close()
            await two.close()

    asyncio.run(course())

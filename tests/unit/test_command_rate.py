"""The command rate limit and command ids a gateway keeps (services/gateway/command_rate.py):
counted without a Redis call, shared with the other gateways a moment later."""

from __future__ import annotations

import asyncio

import fakeredis

from services.bootstrap import wire_gateway
from services.gateway import command_rate
from services.gateway.backend import RedisBackend
from services.gateway.command_rate import CommandRate
from services.settings import Settings

T0 = 1_800_000_000.0  # the start of a window of 2 s and of 60 s


def test_a_player_is_refused_past_the_limit_until_the_window_turns_and_a_refusal_is_not_counted() -> None:
    rate = CommandRate()
    admitted = [rate.admit("p1", f"t1:c{n}", "m", 3, 2, T0 + 0.1 * n) for n in range(5)]
    assert [a.wait is None for a in admitted] == [True, True, True, False, False]
    assert admitted[3].wait is not None and 1.69 < admitted[3].wait < 1.71  # the window turns at T0 + 2
    others = [rate.admit("p2", f"t1:e{n}", "m", 3, 2, T0 + 0.5) for n in range(4)]  # another player's own count
    assert [a.wait is None for a in others] == [True, True, True, False]
    turned = [rate.admit("p1", f"t1:d{n}", "m", 3, 2, T0 + 2.0) for n in range(4)]
    assert [a.wait is None for a in turned] == [True, True, True, False]


def test_a_retry_is_not_counted_and_an_id_reused_for_another_body_is_refused() -> None:
    rate = CommandRate()
    first = rate.admit("p1", "t1:a", "pass", 2, 60, T0)
    retries = [rate.admit("p1", "t1:a", "pass", 2, 60, T0 + n) for n in range(1, 5)]
    reused = rate.admit("p1", "t1:a", "play AS", 2, 60, T0 + 5)
    assert (first.retry, first.reused, first.wait) == (False, False, None)
    assert all(r.retry and not r.reused for r in retries)
    assert reused.reused and not reused.retry
    assert rate.admit("p1", "t1:b", "pass", 2, 60, T0 + 6).wait is None  # the second counted
    assert rate.admit("p1", "t1:c", "pass", 2, 60, T0 + 7).wait is not None
    assert rate.admit("p1", "t1:a", "pass", 2, 60, T0 + 8).retry  # a retry is let through past the limit
    assert rate.admit("p1", "t2:a", "pass", 2, 60, T0 + 9).wait is not None  # ids are per table: counted


def test_command_ids_are_each_players_own() -> None:
    rate = CommandRate()
    assert rate.admit("p1", "t1:c-1", "pass", 2, 60, T0).wait is None
    bo_same = rate.admit("p2", "t1:c-1", "pass", 2, 60, T0 + 1)  # another player, the same id and body
    bo_other = rate.admit("p2", "t1:c-2", "play AS", 2, 60, T0 + 2)
    assert (bo_same.retry, bo_same.reused, bo_same.wait) == (False, False, None)  # counted, as the player's own
    assert (bo_other.retry, bo_other.reused, bo_other.wait) == (False, False, None)
    assert rate.admit("p2", "t1:c-3", "pass", 2, 60, T0 + 3).wait is not None  # p2's two counted
    assert rate.admit("p1", "t1:c-2", "pass", 2, 60, T0 + 4).wait is None  # p2's ids are not p1's
    assert rate.admit("p1", "t1:c-1", "play KS", 2, 60, T0 + 5).reused


def test_an_id_is_remembered_at_least_its_memory_then_forgotten() -> None:
    rate = CommandRate(memory_s=60.0)
    assert rate.admit("p1", "t1:a", "m1", 100, 60, T0).wait is None
    assert rate.admit("p1", "t1:b", "m1", 100, 60, T0 + 59.0).wait is None  # the same generation
    assert rate.admit("p1", "t1:a", "m2", 100, 60, T0 + 61.0).reused  # a generation on: still remembered
    assert rate.admit("p1", "t1:b", "m2", 100, 60, T0 + 118.0).reused  # 59 s on
    forgotten = rate.admit("p1", "t1:a", "m2", 100, 60, T0 + 121.0)  # two generations on
    assert (forgotten.reused, forgotten.retry, forgotten.wait) == (False, False, None)
    assert rate.admit("p1", "t1:a", "m1", 100, 60, T0 + 122.0).reused  # remembered with its new body


def test_the_ids_and_players_kept_are_bounded() -> None:
    rate = CommandRate(ids_kept=100, players_kept=50)
    for n in range(1_000):
        rate.admit(f"p{n}", f"t1:c{n}", "m", 5, 60, T0)
    assert len(rate._ids) + len(rate._ids_before) <= 100
    assert len(rate._counts) <= 50
    assert rate.admit("p999", "t1:c999", "other", 5, 60, T0).reused  # the newest are the ones kept
    for n in range(10):  # a window on: the players of the windows before are let go at the next share
        rate.admit(f"q{n}", "t1:c", "m", 5, 60, T0 + 60)
    rate.due()
    assert set(rate._counts) == {f"q{n}" for n in range(10)}


def test_what_other_gateways_counted_counts_here_once_shared() -> None:
    here = CommandRate()
    for n in range(3):
        assert here.admit("p1", f"t1:c{n}", "m", 10, 60, T0).wait is None
    (share,) = here.due()
    assert (share.player, share.mine) == ("p1", 3) and not here.due()
    here.shared(share, 9)  # every gateway's counts: these 3 and 6 of others
    assert here.admit("p1", "t1:c3", "m", 10, 60, T0 + 1).wait is None  # 3 + 6 + 1 = 10
    assert here.admit("p1", "t1:c4", "m", 10, 60, T0 + 1).wait is not None
    (failing,) = here.due()
    here.not_shared(failing)
    (again,) = here.due()  # a failed share goes with the next one, the count as it stands
    assert again.mine == 4 and not here.has_unshared() and not here.due()
    here.shared(again, 9)  # the others' count read again: 5 now
    assert here.admit("p1", "t1:c5", "m", 10, 60, T0 + 2).wait is None  # 4 + 5 + 1 = 10
    late = CommandRate()
    late.admit("p1", "t1:c0", "m", 10, 60, T0)
    (before,) = late.due()
    late.admit("p1", "t1:c1", "m", 10, 60, T0 + 60)  # the window turns while the share is out
    late.not_shared(before)  # the old window's count is not shared again
    late.shared(before, 10)  # nor does its answer count in the new window
    assert [(s.window, s.mine) for s in late.due()] == [(int((T0 + 60) // 60), 1)]
    assert late.admit("p1", "t1:c2", "m", 10, 60, T0 + 61).wait is None


def test_past_the_players_kept_the_players_whose_counts_began_first_are_let_go() -> None:
    rate = CommandRate(players_kept=4)
    rate.admit("hot", "t1:a", "m", 2, 60, T0 - 60)  # counted in the window before, then again in this one
    for n, player in enumerate(["p1", "p2", "hot", "p3"]):
        rate.admit(player, f"t1:b{n}", "m", 2, 60, T0)
    rate.admit("hot", "t1:c", "m", 2, 60, T0 + 1)  # hot's second in this window
    rate.admit("p4", "t1:d", "m", 2, 60, T0 + 2)  # a fifth player: the older half goes
    assert "hot" in rate._counts and "p1" not in rate._counts
    assert rate.admit("hot", "t1:e", "m", 2, 60, T0 + 3).wait is not None  # its count kept: over


async def _shared_by_itself(gateway: RedisBackend) -> None:
    """Wait (5 s at most) for the gateway's own share: its sharing ran and ended, its counts shared."""
    await asyncio.sleep(command_rate.SHARE_S)
    for _ in range(100):
        task = gateway._sharer
        if not gateway._rate.has_unshared() and task is not None and task.done():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the gateway never shared its counts")


def test_two_gateways_on_one_redis_hold_a_player_to_the_limit_together_once_each_has_shared() -> None:
    server = fakeredis.FakeServer()

    async def run() -> list[list[bool]]:
        gateways = [wire_gateway(fakeredis.FakeAsyncRedis(server=server, protocol=2), Settings(partitions=4))
                    for _ in range(2)]
        n = iter(range(1_000))

        async def send(gateway: int, commands: int) -> list[bool]:
            admitted = [(await gateways[gateway].admit_command("p1", f"t1:c{next(n)}", "m", 20, 60)).wait is None
                        for _ in range(commands)]
            await _shared_by_itself(gateways[gateway])  # shared, and the total read back
            return admitted

        try:
            # a burst on each, before either has read the other's count: each holds it alone
            return [await send(0, 12), await send(1, 12), await send(0, 1), await send(1, 1), await send(0, 1)]
        finally:
            for gateway in gateways:
                await gateway.close()

    first, second, first_again, second_again, last = asyncio.run(run())
    assert all(first) and all(second)  # 12 each: under the limit as each gateway counted them
    assert first_again == [True]  # the first had read only its own 12 (13 of 20 as it counts)
    assert second_again == [False]  # the second has read the first's 12: with its own 12, past 20
    assert last == [False]  # and the first, once it has read the second's
    assert asyncio.run(_shared_counts(server)) == [25]  # 13 through the first, 12 through the second


def test_a_stopping_gateway_shares_what_it_counted() -> None:
    server = fakeredis.FakeServer()

    async def run() -> int:
        gateway = wire_gateway(fakeredis.FakeAsyncRedis(server=server, protocol=2), Settings(partitions=4))
        for n in range(5):
            await gateway.admit_command("p1", f"t1:c{n}", "m", 20, 60)
        await gateway.close()  # before the share was due
        (total,) = await _shared_counts(server)
        return total

    assert asyncio.run(run()) == 5


async def _shared_counts(server: fakeredis.FakeServer) -> list[int]:
    """Each window's shared count in Redis: every gateway's field summed."""
    reader = fakeredis.FakeAsyncRedis(server=server)
    return [sum(int(v) for v in await reader.hvals(key)) for key in await reader.keys("*:rates:*")]

"""Command ids are remembered for the idempotency window, then forgotten (append.lua's
two generations of ids and key expiry: docs/store.md, "Idempotency"); the 4-key call of
earlier releases keeps them."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from services.store.base import EMPTY_HEAD
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore

pytestmark = pytest.mark.integration


def test_a_command_id_is_kept_a_window_and_forgotten_by_the_second_generation_after(redis_client: Any) -> None:
    space = KeySpace(4, namespace="window")
    store = RedisEventStore(redis_client, keys=space, idempotency_s=0.3)
    head = store.append("w1", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"o1").head
    again = store.append("w1", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"o1")
    assert again.duplicate and again.outcome == b"o1"

    def keep_alive(n: int) -> None:  # an append every 0.15 s: the keys do not expire
        nonlocal head
        for k in range(2):
            time.sleep(0.15)
            head = store.append("w1", [b"k"], expected=head, command_id=f"k{n}{k}", outcome=b"k").head

    keep_alive(1)  # 0.3 s: the generation c1 began in is a window old
    head = store.append("w1", [b"b"], expected=head, command_id="c2", outcome=b"o2").head
    assert store.outcome_of("w1", "c1") == b"o1", "a window on, the generation before still answers"
    duplicate = store.append("w1", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"o1")
    assert duplicate.duplicate and duplicate.head == head, "answered from the generation before"
    keep_alive(2)
    head = store.append("w1", [b"c"], expected=head, command_id="c3", outcome=b"o3").head
    assert store.outcome_of("w1", "c1") is None, "two generations on, forgotten"
    assert store.outcome_of("w1", "c2") == b"o2" and store.outcome_of("w1", "c3") == b"o3"
    keys = space.table("w1")
    assert not redis_client.exists(keys.legacy_command_index), "no time-ordered list any more"
    assert 0 < redis_client.pttl(keys.commands) <= 337 and 0 < redis_client.pttl(keys.previous_commands) <= 337
    time.sleep(0.4)
    assert not redis_client.exists(keys.commands, keys.previous_commands), "an idle table drops them all"
    assert store.head("w1") == head and len(store.read("w1")) == 7, "the events stay"


def test_every_command_id_is_a_duplicate_for_at_least_the_window(redis_client: Any) -> None:
    """Appends at random intervals around the window: every id sent less than a window
    before an append is still answered as a duplicate after it; none outlives two windows
    and the time to the next append."""
    window = 0.2
    space = KeySpace(4, namespace="window")
    store = RedisEventStore(redis_client, keys=space, idempotency_s=window)
    rng = random.Random(7)
    head, sent = EMPTY_HEAD, []
    for n in range(40):
        head = store.append("w3", [b"e"], expected=head, command_id=f"c{n}", outcome=f"o{n}".encode()).head
        now = time.monotonic()
        sent.append((now, n))
        for at, m in sent:
            found = store.outcome_of("w3", f"c{m}")
            # the id was written (server clock) at most a few ms before `at` was read
            if now - at < window - 0.01:
                assert found == f"o{m}".encode(), (n, m, now - at)
            if now - at > 2 * window + 0.1:
                assert found is None, (n, m, now - at)
        time.sleep(rng.choice([0.01, 0.05, 0.12, 0.25]))


def test_the_keys_always_outlive_an_append_by_a_window_and_their_expiry_is_set_rarely(redis_client: Any) -> None:
    """After every append the current ids have at least the window left; a key with more
    left is not written again (its expiry, an AOF write, is set about once an eighth of a
    window)."""
    space = KeySpace(4, namespace="window")
    store = RedisEventStore(redis_client, keys=space, idempotency_s=2.0)
    keys = space.table("w2")
    head = store.append("w2", [b"a"], expected=EMPTY_HEAD, command_id="c0", outcome=b"o").head
    set_at = redis_client.pttl(keys.commands)
    assert 2000 < set_at <= 2250
    for n in range(1, 5):  # 0.2 s of the 0.25 s an eighth of the window gives
        time.sleep(0.04)
        head = store.append("w2", [b"a"], expected=head, command_id=f"c{n}", outcome=b"o").head
        left = redis_client.pttl(keys.commands)
        assert 2000 <= left < set_at, left  # counting down, not set again
    time.sleep(0.15)  # now less than the window is left: the next append sets it again
    store.append("w2", [b"a"], expected=head, command_id="c9", outcome=b"o")
    assert redis_client.pttl(keys.commands) > 2200
    assert not redis_client.exists(keys.previous_commands), "no generation before within the first window"


def test_ids_an_earlier_release_kept_are_kept_a_window_more(redis_client: Any) -> None:
    """A ``cmds`` hash written by a release before the generations (no start time in it,
    its ids listed in ``…:cmdx``) begins its generation at the first append: its ids stay
    duplicates a window on, and the old list is left to expire."""
    space = KeySpace(4, namespace="upgrade")
    store = RedisEventStore(redis_client, keys=space, idempotency_s=0.3)
    head = store.append("u1", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"o1").head
    keys = space.table("u1")
    redis_client.delete(keys.commands)
    redis_client.hset(keys.commands, "old", b"o-old")  # as the release before left it
    redis_client.rpush(keys.legacy_command_index, "1:old")
    redis_client.pexpire(keys.legacy_command_index, 5000)
    for n in range(4):  # 0.45 s, an append every 0.15 s
        head = store.append("u1", [b"b"], expected=head, command_id=f"c{n + 2}", outcome=b"o").head
        assert store.outcome_of("u1", "old") == b"o-old"
        time.sleep(0.15)
    assert redis_client.exists(keys.previous_commands), "the generation begun at the upgrade is the one before"
    assert redis_client.lrange(keys.legacy_command_index, 0, -1) == [b"1:old"], "untouched, expiring"


def test_without_a_window_command_ids_are_kept(redis_client: Any) -> None:
    space = KeySpace(4, namespace="forever")
    store = RedisEventStore(redis_client, keys=space, idempotency_s=0)
    store.append("f1", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"o1")
    keys = space.table("f1")
    assert redis_client.pttl(keys.commands) == -1 and not redis_client.exists(keys.previous_commands)
    assert redis_client.hkeys(keys.commands) == [b"c1"], "no generation start without a window"

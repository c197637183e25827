"""Command ids are remembered for the idempotency window, then forgotten (append.lua's
time-ordered index and key expiry); the 4-key call of earlier releases keeps them."""

from __future__ import annotations

import time
from typing import Any

import pytest

from services.store.base import EMPTY_HEAD
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore

pytestmark = pytest.mark.integration


def test_a_command_id_is_a_duplicate_within_the_window_and_forgotten_after_it(redis_client: Any) -> None:
    space = KeySpace(4, namespace="window")
    store = RedisEventStore(redis_client, keys=space, idempotency_s=0.3)
    first = store.append("w1", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"o1")
    again = store.append("w1", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"o1")
    assert again.duplicate and again.outcome == b"o1"
    time.sleep(0.4)
    second = store.append("w1", [b"b"], expected=first.head, command_id="c2", outcome=b"o2")
    assert store.outcome_of("w1", "c1") is None, "forgotten by the next append after the window"
    assert store.outcome_of("w1", "c2") == b"o2"
    keys = space.table("w1")
    assert 0 < redis_client.pttl(keys.commands) <= 337 and 0 < redis_client.pttl(keys.command_index) <= 337
    time.sleep(0.4)
    assert not redis_client.exists(keys.commands, keys.command_index), "an idle table drops them all"
    assert store.head("w1") == second.head and len(store.read("w1")) == 2, "the events stay"


def test_the_keys_always_outlive_an_append_by_a_window_and_their_expiry_is_set_rarely(redis_client: Any) -> None:
    """After every append both keys have at least the window left; one with more left is
    not written again (its expiry, an AOF write, is set about once an eighth of a window)."""
    space = KeySpace(4, namespace="window")
    store = RedisEventStore(redis_client, keys=space, idempotency_s=2.0)
    keys = space.table("w2")
    head = store.append("w2", [b"a"], expected=EMPTY_HEAD, command_id="c0", outcome=b"o").head
    set_at = redis_client.pttl(keys.commands)
    assert 2000 < set_at <= 2250
    for n in range(1, 5):  # 0.2 s of the 0.25 s an eighth of the window gives
        time.sleep(0.04)
        head = store.append("w2", [b"a"], expected=head, command_id=f"c{n}", outcome=b"o").head
        left = redis_client.pttl(keys.commands), redis_client.pttl(keys.command_index)
        assert all(2000 <= ms < set_at for ms in left), left  # counting down, not set again
    time.sleep(0.15)  # now less than the window is left: the next append sets it again
    store.append("w2", [b"a"], expected=head, command_id="c9", outcome=b"o")
    assert redis_client.pttl(keys.commands) > 2200 and redis_client.pttl(keys.command_index) > 2200


def test_without_a_window_command_ids_are_kept(redis_client: Any) -> None:
    space = KeySpace(4, namespace="forever")
    store = RedisEventStore(redis_client, keys=space, idempotency_s=0)
    store.append("f1", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"o1")
    keys = space.table("f1")
    assert redis_client.pttl(keys.commands) == -1 and not redis_client.exists(keys.command_index)

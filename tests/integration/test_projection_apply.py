"""The apply script (services/projection/apply.lua) writes a batch's documents and
announces them in the order of its ops, on a real redis-server: a document written
twice keeps the last, a last word deletes what was written before it, and every
announcement goes out in turn."""

from __future__ import annotations

import time
from typing import Any

import pytest

from services.projection.store import APPLY_SCRIPT

pytestmark = [pytest.mark.integration, pytest.mark.single_node]

TAG = "{p07}"
FIXED = [f"t:{TAG}:ckpt", f"t:{TAG}:lease", f"t:{TAG}:feed", f"t:{TAG}:dead", f"t:{TAG}:dead:tables"]


def _apply(client: Any, ops: list[tuple[str, str, str, bytes]]) -> list[Any]:
    """Apply ``ops`` (code, key, field, value) as one batch of one feed entry."""
    client.set(FIXED[1], "token")
    entry = client.xadd(FIXED[2], {"t": "x"}).decode()
    keys = list(FIXED)
    args: list[Any] = ["token", "0-0", entry, 1, entry, "0", 0]
    for code, key, field, value in ops:
        if key not in keys:
            keys.append(key)
        args.extend((code, keys.index(key) + 1, field, value))
    reply: list[Any] = client.eval(APPLY_SCRIPT, len(keys), *keys, *args)
    return reply


def _messages(pubsub: Any, kind: str, count: int) -> list[tuple[bytes, bytes]]:
    """The next ``count`` messages of ``kind`` (within 5 s), as (channel, data)."""
    got: list[tuple[bytes, bytes]] = []
    deadline = time.monotonic() + 5
    while len(got) < count and time.monotonic() < deadline:
        message = pubsub.get_sharded_message(timeout=0.2)
        if message and message["type"] == kind:
            got.append((message["channel"], message["data"]))
    return got


def test_a_batchs_ops_land_and_are_announced_in_their_order(redis_client: Any) -> None:
    one, two, three, turns = (f"t:{TAG}:view:{name}" for name in ("one", "two", "three", "turns"))
    pubsub = redis_client.pubsub()
    pubsub.ssubscribe(one, two, turns)
    _messages(pubsub, "ssubscribe", 3)  # the three followings confirmed before the batch is applied
    ops = [("S", one, "", b"v1"), ("S", two, "", b"v2"), ("T", turns, "0", b"t1"),
           ("S", one, "", b"v3"), ("s", three, "", b"quiet"), ("P", two, "", b"last word"),
           ("S", one, "", b"v4")]
    assert _apply(redis_client, ops)[0] == b"ok"
    assert redis_client.get(one) == b"v4"  # written in the ops' order: the last one stands
    assert redis_client.get(two) is None  # the last word deletes what was written before it
    assert redis_client.get(three) == b"quiet"
    assert redis_client.hget(turns, "0") == b"t1"
    assert _messages(pubsub, "smessage", 6) == [
        (one.encode(), b"v1"), (two.encode(), b"v2"), (turns.encode(), b"t1"),
        (one.encode(), b"v3"), (two.encode(), b"last word"), (one.encode(), b"v4")]
    pubsub.close()

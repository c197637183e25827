"""Partition leases: which worker of a kind owns which partitions (docs/workers.md).

Every worker that splits the partitions with others of its kind (the projection workers,
the bot workers) does it through this module and nothing else:

- ``mighty:{p07}:lease:<kind>`` names the worker that owns the partition, with a time to
  live: taken by a script that sets it if free or already the worker's (``PX``), renewed
  every lease/3 by a compare-and-``PEXPIRE`` script, released by a compare-and-``DEL``;
- ``mighty:{workers}:<kind>`` is the sorted set of live workers by heartbeat: each
  worker's fair share is ``ceil(partitions / live)``; one over it gives back its highest
  partitions, one under it takes free ones, starting at an offset of its own id so that
  workers started together do not all try the same partitions first.

A worker that dies stops renewing: its heartbeat and its leases expire after the lease
time, the others' share grows, and they take its partitions at their next renewal. One
stopped cleanly releases its leases and leaves the set, so they are taken at once.
"""

from __future__ import annotations

import math
import os
import secrets
import socket
from collections.abc import Collection, Iterator, Sequence
from typing import Any, Final

from services.projection.keys import ProjectionKeys
from services.store.cluster import SyncClient, evalsha_many

# KEYS[1] the lease, KEYS[2] the checkpoint: {1, stored checkpoint id} while the lease is
# the token's (extended), {0, ''} once it is not.
RENEW: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, redis.call('HGET', KEYS[2], 'id') or '0-0'}
end
return {0, ''}
"""
ACQUIRE: Final = """
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""
RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def new_worker_id(kind: str) -> str:
    return f"{kind}-{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def fair_share(partitions: int, live: int) -> int:
    """How many partitions one of ``live`` workers owns."""
    return math.ceil(partitions / max(live, 1))


def surplus(owned: Collection[int], share: int) -> list[int]:
    """The partitions a worker owning ``owned`` gives back to keep ``share``: its highest."""
    return sorted(owned, reverse=True)[:max(0, len(owned) - share)]


class Leases:
    """The leases of one kind's partitions, and the list of the kind's live workers."""

    def __init__(self, client: SyncClient, keys: ProjectionKeys) -> None:
        self.client: Any = client  # bytes replies
        self.keys = keys
        self._renew = self.client.register_script(RENEW)
        self._acquire = self.client.register_script(ACQUIRE)
        self._release = self.client.register_script(RELEASE)

    def acquire(self, partition: int, token: str, ttl_ms: int) -> bool:
        """Take a free lease, or one this token already holds (a worker taking its
        partitions again after an outage finds its own leases still there)."""
        return bool(self._acquire(keys=[self.keys.lease(partition)], args=[token, ttl_ms]))

    def renew(self, partitions: Sequence[int], token: str, ttl_ms: int) -> list[str | None]:
        """Extend this worker's leases (one round trip). Answers, per partition, the
        stored checkpoint's id where the lease is still the token's (``0-0`` for a kind
        without one), None where it is not: a projection worker compares it with the
        checkpoint it holds to see the store went back."""
        calls = [([self.keys.lease(p), self.keys.checkpoint(p)], [token, ttl_ms]) for p in partitions]
        replies = evalsha_many(self.client, RENEW, self._renew.sha, calls)
        return [bytes(stored).decode() if int(kept) else None for kept, stored in replies]

    def release(self, partition: int, token: str) -> None:
        self._release(keys=[self.keys.lease(partition)], args=[token])

    def take_over(self, partition: int, token: str, ttl_ms: int) -> None:
        """Take the lease whoever holds it (a rebuild): the holder's next write is refused."""
        self.client.set(self.keys.lease(partition), token, px=ttl_ms)

    def holders(self) -> list[str | None]:
        """Who holds each partition's lease (None: nobody), one round trip."""
        pipe = self.client.pipeline(transaction=False)
        for partition in range(self.keys.partitions):
            pipe.get(self.keys.lease(partition))
        return [None if found is None else bytes(found).decode() for found in pipe.execute()]

    def heartbeat(self, worker_id: str, ttl_ms: int) -> int:
        """Record this worker as live; answer how many workers of the kind are live."""
        now_s, now_us = self.client.time()
        now = now_s * 1000 + now_us // 1000
        pipe = self.client.pipeline(transaction=False)
        pipe.zadd(self.keys.workers(), {worker_id: now})
        pipe.zremrangebyscore(self.keys.workers(), 0, now - ttl_ms)
        pipe.zcard(self.keys.workers())
        return int(pipe.execute()[-1])

    def leave(self, worker_id: str) -> None:
        self.client.zrem(self.keys.workers(), worker_id)

    def take_up_to(self, owned: Collection[int], share: int, token: str, ttl_ms: int) -> Iterator[int]:
        """Take free partitions while ``owned`` (the caller's own collection, which it
        adds each partition yielded to) is under ``share``; yields each one taken."""
        count = self.keys.partitions
        offset = int.from_bytes(token.encode()[-4:], "big") % count  # spread first picks
        for i in range(count):
            partition = (offset + i) % count
            if len(owned) >= share:
                return
            if partition not in owned and self.acquire(partition, token, ttl_ms):
                yield partition

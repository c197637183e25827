"""`mighty bench audit`: the audit routes (``/verify``, ``/hands``, ``/hands/{n}``) on
one long table, 50,000 events by default.

The table is a five-seat Mighty table played at random through the command handler over
the in-memory store (the rules' own events), then copied into Redis through the append
script, pipelined, each command as the one append it was: the stream, the meta, the
feed and the table index are what a table played through the service leaves. Then the
audit routes are asked, in process, through the gateway's own code paths
(``services/gateway/audit_reads.py``): the first verify (no checkpoint yet: it works its
way from the first event, one bounded slice a call, each call answered 200 or 503 with
Retry-After), the next ones (from the checkpoint), ``hands`` and one hand file; and the
old way, the whole stream read and checked at once (``--whole``). Redis: REDIS_URL when
set, else a private redis-server started for the run. Prints one JSON object
(docs/performance.md, "Audit routes on a long table").
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import secrets
import time
from typing import Any

from domain.codec import encode_event
from domain.table import CreateTable, Submission, TableState, evolve, initial_state
from services.audit.verify import command_groups
from services.commands.tables import TableDecider
from services.players import next_submission, seating
from services.redis_runtime import redis_url_for_run
from services.store.base import GENESIS, HASH_VERSION, Head, StoredEvent, event_hash
from services.store.cluster import SyncClient
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore, append_call, connect

PLAYERS = ["ana", "bo", "cy", "di", "ed"]
_PIPELINE = 500  # appends a pipeline


def played_events(table_id: str, events: int, seed: int = 0) -> list[StoredEvent]:
    """A five-seat table played at random until it holds at least ``events`` events: the
    rules' own events, encoded and chained as the command handler appends them (no I/O)."""
    rng = random.Random(seed)
    state: TableState = initial_state(table_id)
    stored: list[StoredEvent] = []
    prev = GENESIS

    def send(submission: Submission) -> None:
        nonlocal state, prev
        command_id = f"c{len(stored)}"
        for event in TableDecider.decide(state, submission):
            data = encode_event(event)
            digest = event_hash(prev, data, command_id)
            stored.append(StoredEvent(len(stored) + 1, data, digest, prev, command_id, HASH_VERSION))
            prev = digest
            state = evolve(state, event)

    send(Submission(command=CreateTable(name=table_id), player=PLAYERS[0]))
    for submission in seating(PLAYERS):
        send(submission)
    while len(stored) < events:
        move = next_submission(state, rng)
        assert move is not None, "a started table always has a next command"
        send(move)
    return stored


def copy_into(client: SyncClient, space: KeySpace, table_id: str, stored: list[StoredEvent],
              forge: int | None = None) -> None:
    """``stored`` appended to ``table_id`` in Redis through the append script, one append
    per command as it was first appended, pipelined (after the table's head: ``stored``
    starts where it ends). ``forge``: that version's bytes are stored edited (its hash
    stays the true one), as a forger editing the stream would leave it."""
    store = RedisEventStore(client, keys=space)
    sha = store.script_sha
    client.script_load(store._script)  # noqa: SLF001 - the script the store sends
    head = Head(stored[0].version - 1, stored[0].prev_hash) if stored else Head(0, GENESIS)
    calls: list[tuple[list[str], list[Any]]] = []
    for group in command_groups(stored):
        keys, args = append_call(space, table_id, [e.data for e in group], head, group[0].command_id, b"", 0)
        for n, event in enumerate(group):
            if event.version == forge:
                args[6 + 2 * n] = event.data + b" "
        calls.append((keys, args))
        head = Head(group[-1].version, group[-1].hash)
    for start in range(0, len(calls), _PIPELINE):
        pipe: Any = client.pipeline(transaction=False)
        for keys, args in calls[start:start + _PIPELINE]:
            pipe.execute_command("EVALSHA", sha, len(keys), *keys, *args)
        for reply in pipe.execute():
            assert reply[0] == b"ok", reply


def build_table(client: SyncClient, space: KeySpace, table_id: str, events: int, seed: int = 0) -> int:
    """A table of at least ``events`` events in Redis; its event count."""
    stored = played_events(table_id, events, seed)
    copy_into(client, space, table_id, stored)
    return len(stored)


def _timed(call: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    answer = call()
    return round(time.perf_counter() - started, 3), answer


def run(url: str, events: int, whole: bool) -> dict[str, Any]:
    from services.gateway import audit as table_audit
    from services.gateway.audit_reads import AuditReads
    from services.gateway.errors import ApiError
    from services.store.async_redis_store import connect_async

    space = KeySpace(namespace=f"bench-audit-{secrets.token_hex(4)}")
    client = connect(url)
    table_id = "long"
    figures: dict[str, Any] = {}
    try:
        started = time.perf_counter()
        figures["events"] = build_table(client, space, table_id, events)
        figures["build_s"] = round(time.perf_counter() - started, 1)

        async def measure() -> None:
            from services.bootstrap import wire_gateway
            from services.settings import Settings

            aio = connect_async(url)
            backend = wire_gateway(aio, Settings(redis_url=url, namespace=space.namespace))
            reads = AuditReads(backend)
            try:
                if whole:
                    t, stored = await _atimed(backend.events(table_id))
                    figures["whole_read_s"] = t
                    figures["whole_verify_s"], _ = _timed(lambda: table_audit.verify(table_id, stored))
                    figures["whole_hands_s"], _ = _timed(lambda: table_audit.hands_of(stored))
                calls, first = 0, time.perf_counter()
                slowest = 0.0
                while True:
                    calls += 1
                    began = time.perf_counter()
                    try:
                        verdict = await reads.verify(table_id)
                        break
                    except ApiError:  # 503: not caught up within one call's budget
                        pass
                    finally:
                        slowest = max(slowest, round(time.perf_counter() - began, 3))
                figures["first_verify_calls"] = calls
                figures["first_verify_slowest_call_s"] = slowest
                figures["first_verify_total_s"] = round(time.perf_counter() - first, 3)
                figures["verify_s"], verdict = await _atimed(reads.verify(table_id))
                figures["ok"] = verdict.ok
                figures["hands_s"], hands = await _atimed(reads.hands(table_id))
                figures["hands"] = len(hands)
                figures["hand_file_s"], _ = await _atimed(reads.hand_file(table_id, len(hands) // 2))
            finally:
                await aio.aclose()

        asyncio.run(measure())
    finally:
        keys = list(client.scan_iter(match=f"{space.namespace}:*", count=1000))
        for start in range(0, len(keys), 500):
            client.delete(*keys[start:start + 500])
        client.close()
    return figures


async def _atimed(call: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    answer = await call
    return round(time.perf_counter() - started, 3), answer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench audit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=50_000, help="the table's events (default 50,000)")
    parser.add_argument("--whole", action="store_true",
                        help="also time the old way: the whole stream read, verified and folded at once")
    parser.add_argument("--json", action="store_true", help="(the output is always JSON)")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        print(json.dumps(run(redis_url_for_run(stack), args.events, args.whole)))
    return 0

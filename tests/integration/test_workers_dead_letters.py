"""A feed entry no worker can decode or fold (a poison entry) is passed over as a dead
letter: every worker keeps running, the other tables converge, the letter is listed, and
a rebuild from the table streams brings the held-back table back and clears it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest

from projections import KINDS
from projections.docs import decode
from projections.views import SPECTATOR, view_name
from services.projection.read import lag, wait_until
from services.projection.rebuild import rebuild
from services.store.keys import KeySpace
from tests.integration.workers.support import (
    Tables,
    assert_identical_to_a_rebuild,
    store_of,
    wait_ready,
    workers,
)

pytestmark = pytest.mark.integration
SPACE = KeySpace(16)


def _stored_version(client: Any, table_id: str) -> int:
    store = store_of(client, SPACE, "views")
    data = client.get(store.keys.doc(SPACE.partition_of(table_id), view_name(table_id, SPECTATOR)))
    return 0 if data is None else int(decode(data)["version"])


def _cli(url: str, *args: str) -> list[dict[str, Any]]:
    env = {**os.environ, "MIGHTY_LOG_LEVEL": "warning"}
    done = subprocess.run([sys.executable, "-m", "services.cli", "projections", *args, "--redis-url", url],
                          capture_output=True, check=True, env=env, timeout=60)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_poison_feed_entry_becomes_a_dead_letter_and_no_worker_stops(redis_server: Any, redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=23)
    table_ids = [f"dl{i:02d}" for i in range(8)]
    victim = table_ids[0]
    others = [t for t in table_ids if SPACE.partition_of(t) != SPACE.partition_of(victim)]
    assert others, "some tables live in other partitions"
    with workers(redis_server.url) as processes:
        wait_ready(redis_client, SPACE, KINDS)
        tables.open(table_ids)
        tables.play(hands=1, steps=20)
        # An event of a type no release ever wrote, for a real table, straight into its
        # partition's feed; and, in another partition, an entry with every field missing.
        poison = redis_client.xadd(SPACE.feed(SPACE.partition_of(victim)),
                                   {"t": victim, "v": 9999, "e": b'{"type":"no_such_event","v":1}', "h": "0" * 64})
        garbage = redis_client.xadd(SPACE.feed(SPACE.partition_of(others[0])), {"x": "garbage"})
        tables.play(hands=1)  # every table goes on, the victim too
        for kind in KINDS:
            wait_until(redis_client, SPACE, kind, timeout_s=60)
        time.sleep(1.0)  # a worker that dies of the entry dies within this
        assert [p.poll() for p in processes] == [None] * len(KINDS), "every worker is still running"

        for table_id in table_ids[1:]:
            assert _stored_version(redis_client, table_id) == tables.states[table_id][1], "the others converge"
        assert _stored_version(redis_client, victim) < tables.states[victim][1], "the victim is held back"
        rows = [row for row in _cli(redis_server.url, "lag") if "behind" in row]  # the summaries
        assert sorted(row["kind"] for row in rows) == sorted(KINDS)
        assert all(row["entries"] == 0 for row in rows), "lag returns to 0"
        dead_by_kind = {row["kind"]: row["dead_letters"] for row in rows}
        assert all(count >= 2 for count in dead_by_kind.values()), dead_by_kind
        letters = _cli(redis_server.url, "dead-letters", "--kind", "ledger")
        assert {r["kind"] for r in letters} == {"ledger"}
        by_id = {(r["partition"], r["feed_id"]): r for r in letters}  # two feeds may give one id
        found = by_id[(SPACE.partition_of(victim), poison.decode())]
        assert found["table"] == victim and found["version"] == 9999
        assert "no_such_event" in found["reason"]
        assert "malformed feed entry" in by_id[(SPACE.partition_of(others[0]), garbage.decode())]["reason"]
        later = [r for r in letters if r["table"] == victim and r["version"] != 9999]
        assert later and all("earlier dead letter" in r["reason"] for r in later), "the victim's later events wait"

        # The fix is in the stream (the poison was never there): a rebuild applies what
        # the dead letters stood for, and clears them.
        for kind in KINDS:
            for partition in range(SPACE.partitions):
                rebuild(store_of(redis_client, SPACE, kind), partition)
        assert all(row.dead_letters == 0 for kind in KINDS for row in lag(redis_client, SPACE, kind))
        assert _stored_version(redis_client, victim) == tables.states[victim][1]
        tables.play(hands=2)
        for kind in KINDS:
            wait_until(redis_client, SPACE, kind, timeout_s=60)
        assert [p.poll() for p in processes] == [None] * len(KINDS)
        for table_id in table_ids:
            assert _stored_version(redis_client, table_id) == tables.states[table_id][1]
    assert_identical_to_a_rebuild(redis_client, SPACE)

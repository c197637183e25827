"""Mitigati tables through the whole service on a real redis-server (the fixtures'
private one): the handler and store, the three kinds of workers, a rebuild from the
streams byte-identical to what the workers stored, verify on the stored streams, and
``mighty demo --variant mitigati`` printing a zero-sum ledger."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from domain.codec import decode_event
from domain.mitigati import events as mev
from domain.mitigati.ledger import TableLedger as MitigatiTableLedger
from projections import KINDS
from services.audit import verify_events
from services.projection.read import lobby, player_ledgers, table_ledger, wait_until
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore
from tests.integration.workers.support import Tables, assert_identical_to_a_rebuild, workers

pytestmark = pytest.mark.integration
SPACE = KeySpace(16)


def test_mitigati_tables_through_the_workers_equal_a_rebuild_and_verify(redis_server: Any, redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=21)
    mitigati = [f"m{i:03d}" for i in range(6)]
    mighty = [f"t{i:03d}" for i in range(2)]
    with workers(redis_server.url):
        tables.open(mitigati, variant="mitigati")
        tables.open(mighty)
        tables.play(hands=3)
        for kind in KINDS:
            wait_until(redis_client, SPACE, kind, timeout_s=60)
    assert_identical_to_a_rebuild(redis_client, SPACE)
    store = RedisEventStore(redis_client, keys=SPACE)
    for table_id in mitigati:
        stored = store.read(table_id)
        verdict = verify_events(table_id, stored)
        assert verdict.ok and verdict.hands >= 3, verdict.finding
        outcomes = [e for e in (decode_event(s.data) for s in stored)
                    if isinstance(e, mev.HandScored | mev.DealAbandoned)]
        ledger = table_ledger(redis_client, SPACE, table_id)
        assert isinstance(ledger, MitigatiTableLedger)
        assert [line.scores for line in ledger.hands] == [e.scores for e in outcomes]
        assert ledger.totals == tables.states[table_id][0].totals
    assert sum(p.total for p in player_ledgers(redis_client, SPACE)) == 0
    entries = {e.table_id: e for e in lobby(redis_client, SPACE)}
    assert all(entries[t].variant == "mitigati" for t in mitigati)


def test_the_demo_plays_mitigati_tables_and_prints_a_zero_sum_ledger(redis_server: Any) -> None:
    env = {**os.environ, "REDIS_URL": redis_server.url}
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "demo", "--variant", "mitigati", "--tables", "3",
         "--hands", "3", "--seed", "5", "--json"],
        capture_output=True, env=env, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    import json

    result = json.loads(done.stdout)
    assert result["hands"] == 9
    assert result["ledger"] and sum(row["total"] for row in result["ledger"]) == 0

"""The bots' ladder (bench/bots.py): duplicate deals seat every level in every seat, and
the report pairs each deal's differences. Nothing here is timed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import bots
from domain.bots import Budget


@pytest.mark.parametrize("players", [3, 4, 5, 6, 8])
def test_over_the_rotations_every_seat_plays_each_level_equally(players: int) -> None:
    rotations = [bots.levels_for("a", "b", players, r) for r in range(players)]
    for seat in range(players):
        column = [levels[seat] for levels in rotations]
        assert column.count("a") == players // 2
    assert all(levels.count("a") == players // 2 for levels in rotations)


def test_a_hand_at_the_table_ends_with_scores_that_sum_to_zero_under_fixed_scoring() -> None:
    from domain.mighty.rules import make_rules
    from domain.prng import Rng

    order = list(make_rules("mighty-5").spec.deck)
    Rng(3).shuffle(order)
    hand = bots.play_hand("mighty-5", tuple(order), 0, ["beginner"] * 5, 1, Budget())
    assert sum(hand["scores"]) == 0
    assert set(hand["times"]) == {"beginner"}


def test_the_report_pairs_each_deals_differences() -> None:
    deals = [{"a": 2.0, "b": -1.0, "stats": {}}, {"a": 0.0, "b": 0.0, "stats": {}},
             {"a": 1.0, "b": -0.5, "stats": {}}]
    report = bots.summarize("mighty-5", [("x", "y")], {("x", "y"): deals}, 5)
    pair = report["pairs"][0]
    assert pair["hands"] == 15 and pair["deals"] == 3
    assert pair["a_avg"] == 1.0 and pair["b_avg"] == -0.5
    low, high = pair["diff_ci95"]
    assert low < 1.5 < high  # the mean paired difference is 1.5
    json.dumps(report)


def test_the_command_prints_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert bots.main(["--hands", "5", "--pairs", "beginner:random", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["game"] == "mighty-5"
    assert {"beginner", "random"} <= set(report["levels"])


def test_a_recorded_ladder_plays_only_the_deals_it_lacks(tmp_path: Path) -> None:
    record = tmp_path / "ladder.jsonl"
    args = ["--hands", "10", "--pairs", "beginner:random", "--json", "--record", str(record)]
    assert bots.main(args[:1] + ["5"] + args[2:]) == 0  # one deal of five hands
    first = record.read_text().splitlines()
    assert len(first) == 1
    record.write_text(first[0] + "\n" + '{"game": "mighty-5", "pair": "beg')  # a line cut short
    assert bots.main(args) == 0  # two deals: the recorded one is kept, one is played
    entries = [json.loads(line) for line in record.read_text().splitlines()[2:]]
    assert [e["deal"] for e in entries] == [bots.deal_seeds(1, 0, 2)[1]]
    assert json.loads(first[0])["deal"] == bots.deal_seeds(1, 0, 2)[0]


def test_a_resumed_ladder_reports_what_one_uninterrupted_run_reports(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = ["--hands", "10", "--pairs", "beginner:random", "--json"]
    assert bots.main(whole) == 0
    expected = json.loads(capsys.readouterr().out)
    record = str(tmp_path / "ladder.jsonl")
    assert bots.main(["--hands", "5", "--pairs", "beginner:random", "--json", "--record", record]) == 0
    capsys.readouterr()
    assert bots.main(whole + ["--record", record]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["pairs"] == expected["pairs"]


def test_a_record_of_another_budget_is_not_counted(tmp_path: Path) -> None:
    key = bots.record_key("mighty-5", "expert", "beginner", 60)
    lines = [json.dumps({**key, "deal": 7, "a": 1.0, "b": 0.0, "stats": {}}),
             json.dumps({**bots.record_key("mighty-5", "expert", "beginner", 30), "deal": 8,
                         "a": 1.0, "b": 0.0, "stats": {}})]
    assert set(bots.recorded_deals(lines, key)) == {7}


def test_the_bot_tables_are_spread_evenly_over_the_workers_and_their_partitions() -> None:
    from bench._bot_tables import table_ids
    from services.store.keys import partition_of

    holders = ["w1", "w2", "w1", "w1", "w2", "w2", "w1", "w2"]  # eight partitions, four each
    ids = table_ids(12, holders)
    assert len(set(ids)) == 12
    owners = [holders[partition_of(t, len(holders))] for t in ids]
    assert owners.count("w1") == owners.count("w2") == 6
    per_partition = [sum(partition_of(t, len(holders)) == p for t in ids) for p in range(len(holders))]
    assert sum(per_partition) == 12 and max(per_partition) - min(per_partition) <= 1


@pytest.mark.parametrize("argv", [["--workers", "1,x"], ["--workers", "0"], ["--workers", "1,2"],
                                  ["--tables", "0"], ["--tables", "2", "--level", "godmode"],
                                  ["--tables", "2", "--rounds", "0"]])
def test_the_bench_refuses_worker_counts_tables_and_levels_it_cannot_run(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        bots.main(argv)
    assert exited.value.code == 2

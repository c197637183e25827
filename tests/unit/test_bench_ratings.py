"""``mighty bench ratings`` (bench/ratings.py): hands played once into a cache that a run
cut short finishes the same way, every treatment measured over the same hands, and the
ladder's verdict read off the ordinals."""

from __future__ import annotations

from pathlib import Path

from bench.ratings import cache_path, raters_of, record, run_calibration, run_ladder
from domain.bots import Budget


def test_the_cache_is_played_once_and_a_run_cut_short_finishes_the_same(tmp_path: Path) -> None:
    spec = "random:2,beginner:4"
    whole = record(tmp_path / "a.jsonl", "mighty-5", spec, 6, 3, Budget(playouts=2))
    first = record(tmp_path / "b.jsonl", "mighty-5", spec, 3, 3, Budget(playouts=2))
    rest = record(tmp_path / "b.jsonl", "mighty-5", spec, 6, 3, Budget(playouts=2))
    assert rest == whole and first == whole[:3]
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    again = record(tmp_path / "a.jsonl", "mighty-5", spec, 6, 3, Budget(playouts=2))  # nothing played
    assert again == whole
    assert all(len(h.sides) == 2 and len(h.declarers) == 1 and h.declarers[0] in h.sides[0] for h in whole)
    assert cache_path(tmp_path, "mighty-5", spec, 3, None).name == "mighty-5_random2_beginner4_s3_pdefault_v2.jsonl"


def test_every_treatment_is_measured_over_the_same_hands_and_the_ladder_reads_the_ordinals(tmp_path: Path) -> None:
    hands = record(tmp_path / "m.jsonl", "mighty-5", "expert:3,beginner:3", 12, 5, Budget(playouts=2))
    out = run_calibration("mighty-5", hands, "expert:3,beginner:3", ("mean", "declarer-edge"), (1.0, 2.0), (0.8,))
    raw = {"mean", "mean, beta x2", "declarer-edge, share 0.8", "declarer-edge, beta x2, share 0.8"}
    assert set(out["treatments"]) == raw | {f"{name}, calibrated" for name in raw}
    assert set(out["learned"]) == raw and all(c["hands"] == 12 for c in out["learned"].values())
    for measured in out["treatments"].values():
        assert measured["predictions"] == 12 and sum(d["n"] for d in measured["deciles"]) == 12
    names = raters_of(("declarer-edge",), (1.0,), (0.8,))
    ladder = run_ladder("mighty-5", hands, "expert:3,beginner:3", "declarer-edge, share 0.8",
                        names["declarer-edge, share 0.8"])
    assert ladder["hands"] == 12 and len(ladder["players"]) == 6
    ordinals = {name: p["ordinal"] for name, p in ladder["players"].items()}
    assert list(ordinals.values()) == sorted(ordinals.values(), reverse=True)
    lowest_expert = min(v for k, v in ordinals.items() if k.startswith("expert-"))
    highest_beginner = max(v for k, v in ordinals.items() if k.startswith("beginner-"))
    assert ladder["experts_above_beginners"] == (lowest_expert > highest_beginner)

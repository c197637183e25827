"""`mighty replay` on every file of ``tests/hands/`` gives the recorded outcome.

The expectations sit beside the hands (``"expect"`` in the file, or ``NAME.expect.json``
for files that are not even JSON); ``tests/hands/make_corpus.py`` writes them. A few
files run through the installed ``mighty`` script in a subprocess, the rest in-process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from domain.rules import make_rules
from services.cli import main

HANDS = Path(__file__).resolve().parents[1] / "hands"
FILES = sorted(p for p in HANDS.glob("*.json") if not p.name.endswith(".expect.json"))
THROUGH_SUBPROCESS = {"complete-first-trick-friend.json", "reject-must-play-joker.json",
                      "broken-card-twice.json", "broken-not-json.json"}


def expectation(path: Path) -> dict[str, Any]:
    sibling = path.with_name(path.stem + ".expect.json")
    if sibling.exists():
        expect: dict[str, Any] = json.loads(sibling.read_text())
        return expect
    expect = json.loads(path.read_text())["expect"]
    return expect


def replay_in_process(path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["replay", str(path), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def replay_in_subprocess(path: Path, *args: str) -> tuple[int, str, str]:
    mighty = Path(sys.executable).with_name("mighty")
    done = subprocess.run([str(mighty), "replay", str(path), *args], capture_output=True,
                          text=True, timeout=60, check=False)
    return done.returncode, done.stdout, done.stderr


def replay(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    if path.name in THROUGH_SUBPROCESS:
        return replay_in_subprocess(path)
    return replay_in_process(path, capsys)


def test_the_corpus_covers_every_kind_of_file() -> None:
    kinds = Counter(p.name.split("-")[0] for p in FILES)
    assert kinds["complete"] >= 10 and kinds["broken"] >= 10 and kinds["reject"] >= 15
    assert kinds["stopped"] and kinds["redeal"] and kinds["option"]
    codes = {expectation(p).get("rejected", {}).get("code") for p in FILES}
    assert codes >= {
        "not_your_turn", "wrong_phase", "bid_too_low", "bid_out_of_range", "already_passed",
        "card_not_in_hand", "bad_discard", "bad_trump_change", "bad_friend_call",
        "must_follow_suit", "illegal_first_lead", "must_play_joker", "joker_suit_required",
        "malformed_command", "misdeal_not_allowed",
    }


def test_the_corpus_is_what_its_generator_writes() -> None:
    sys.path.insert(0, str(HANDS))
    try:
        import make_corpus
    finally:
        sys.path.remove(str(HANDS))
    for name, document in {**make_corpus.complete_hands(), **make_corpus.stopped_early(),
                           **make_corpus.redeals(), **make_corpus.options(),
                           **make_corpus.rejections()}.items():
        assert json.loads((HANDS / f"{name}.json").read_text()) == document, name


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_replaying_a_hand_file_gives_its_recorded_outcome(
    path: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    expect = expectation(path)
    code, out, err = replay(path, capsys)
    assert code == expect["exit"], err or out[-400:]
    if code == 2:
        assert out == "", "a broken file prints no outcome: nothing is half-applied"
        assert expect["error"] in err and err.startswith("mighty replay: ")
        return
    document = json.loads(out)
    check_outcome(document, expect)
    hand_file = json.loads(path.read_text())
    if document["phase"] == "finished":
        check_finished(hand_file, document)
    if code == 3:
        check_nothing_half_applied(tmp_path / path.name, hand_file, document, capsys)


def check_outcome(document: dict[str, Any], expect: dict[str, Any]) -> None:
    assert document["phase"] == expect["phase"]
    if "to_act" in expect:
        assert document.get("to_act") == expect["to_act"]
    result = document["result"]
    for key, value in expect.get("result", {}).items():
        assert result.get(key, "<absent>") == value, key
    for key in expect.get("absent", ()):
        assert key not in result, key
    if "winners" in expect:
        assert [t["winner"] for t in result["tricks"]] == expect["winners"]
    if "redeal" in expect:
        assert document["redeal"] == expect["redeal"]
    if "rejected" in expect:
        got = document["rejected"]
        assert {k: got[k] for k in expect["rejected"]} == expect["rejected"]
        assert got["message"]
    else:
        assert "rejected" not in document
    for partial in expect.get("events_include", ()):
        assert any(all(e.get(k) == v for k, v in partial.items()) for e in document["events"]), partial


def check_finished(hand_file: dict[str, Any], document: dict[str, Any]) -> None:
    """Every finished file: each card played once, 20 points (40 with two packs), zero-sum
    when it should be."""
    rules = make_rules(hand_file["rules"], hand_file.get("options"))
    result = document["result"]
    tricks = result["tricks"]
    assert len(tricks) == rules.spec.hand_size
    discards = next(e["cards"] for e in document["events"] if e["type"] == "cards_discarded")
    played = [c for t in tricks for c in t["cards"]] + discards
    assert Counter(played) == Counter(rules.spec.deck)
    total = sum(c[0] in "AKQJT" for c in rules.spec.deck if not c.startswith("JK"))  # 20; 40 with two packs
    assert sum(t["points"] for t in tricks) + sum(c[0] in "AKQJT" and c[:2] != "JK" for c in discards) == total
    if rules.score != "penalty":
        assert sum(result["scores"]) == 0


def check_nothing_half_applied(shorter: Path, hand_file: dict[str, Any], document: dict[str, Any],
                               capsys: pytest.CaptureFixture[str]) -> None:
    """A refused command writes nothing: the outcome is the replay of the commands before it."""
    index = document["rejected"]["index"]
    shorter.write_text(json.dumps(dict(hand_file, commands=hand_file["commands"][:index])))
    code, out, _ = replay_in_process(shorter, capsys)
    assert code == 0
    clean = json.loads(out)
    assert clean["events"] == document["events"] and clean["result"] == document["result"]
    assert clean["phase"] == document["phase"] and clean.get("to_act") == document.get("to_act")


def test_replay_as_a_seat_prints_what_that_seat_saw_step_by_step(capsys: pytest.CaptureFixture[str]) -> None:
    path = HANDS / "complete-friend-card.json"
    code, out, _ = replay_in_process(path, capsys, "--as", "2")
    assert code == 0
    steps = [json.loads(line) for line in out.splitlines()]
    assert len(steps) == 1 + len(json.loads(path.read_text())["commands"])
    assert all(step["view"]["viewer"] == 2 for step in steps)
    assert steps[0]["view"]["hand"] == ["6S", "5S", "4S", "9H", "8H", "7H", "TD", "9D", "JC", "TC"]
    assert steps[-1]["view"]["scores"] == [2, 1, -1, -1, -1]


def test_replay_as_a_seat_that_does_not_exist_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = replay_in_process(HANDS / "complete-alone.json", capsys, "--as", "5")
    assert code == 2 and out == "" and "--as 5" in err


def test_a_file_that_cannot_be_read_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = replay_in_process(tmp_path / "missing.json", capsys)
    assert code == 2 and out == "" and "cannot read" in err

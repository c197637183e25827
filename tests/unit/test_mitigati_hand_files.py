"""`mighty replay` on every file of ``tests/hands/mitigati/`` gives the outcome worked out
by hand in ``tests/hands/mitigati/make_corpus.py`` (docs/hand-files.md, "Mitigati files")."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from domain.mitigati.cards import DECK, POINTS
from tests.unit.test_hand_files import expectation, replay_in_process

HANDS = Path(__file__).resolve().parents[1] / "hands" / "mitigati"
FILES = sorted(p for p in HANDS.glob("*.json") if not p.name.endswith(".expect.json"))


replay = replay_in_process


def test_the_corpus_covers_every_code_and_every_ending() -> None:
    codes = {expectation(p).get("rejected", {}).get("code") for p in FILES}
    assert codes >= {"not_your_turn", "wrong_phase", "card_not_in_hand", "must_follow_suit",
                     "bad_discard", "malformed_command", "must_trump", "bad_bargain", "bad_declaration"}
    phases = {expectation(p).get("phase") for p in FILES}
    assert phases >= {"bargaining", "discard", "declaring", "play", "finished", "abandoned"}
    assert sum(expectation(p)["exit"] == 2 for p in FILES) >= 9


def test_the_corpus_is_what_its_generator_writes() -> None:
    # loaded under its own name: Mighty's generator is also a module called make_corpus
    spec = importlib.util.spec_from_file_location("mitigati_make_corpus", HANDS / "make_corpus.py")
    assert spec is not None and spec.loader is not None
    make_corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_corpus)
    for name, document in make_corpus.all_files().items():
        assert json.loads((HANDS / f"{name}.json").read_text()) == document, name


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_replaying_a_mitigati_file_gives_its_worked_out_outcome(
        path: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    expect = expectation(path)
    code, out, err = replay(path, capsys)
    assert code == expect["exit"], err or out[-400:]
    if code == 2:
        assert out == "" and err.startswith("mighty replay: ") and expect["error"] in err
        return
    document = json.loads(out)
    check_outcome(document, expect)
    if document["phase"] == "finished":
        check_finished(document)
    if code == 3:
        check_nothing_half_applied(tmp_path / path.name, json.loads(path.read_text()), document, capsys)


def check_outcome(document: dict[str, Any], expect: dict[str, Any]) -> None:
    assert list(document)[:2] == ["phase", "result"] and "events" in document
    assert document["phase"] == expect["phase"]
    for key in ("to_act", "session"):
        if key in expect:
            assert document.get(key) == expect[key], key
    assert ("session" in document) == (document["phase"] == "bargaining")
    result = document["result"]
    assert result["dealer"] == document["events"][0]["dealer"] and "bargain" in result and "tricks" in result
    for key, value in expect.get("result", {}).items():
        assert result.get(key, "<absent>") == value, key
    for key in expect.get("absent", ()):
        assert key not in result, key
    if "result_keys" in expect:
        assert list(result) == expect["result_keys"]
    if "winners" in expect:
        assert [t["winner"] for t in result["tricks"]] == expect["winners"]
    if "first_trick" in expect:
        assert result["tricks"][0] == expect["first_trick"]
    if "rejected" in expect:
        got = document["rejected"]
        assert {k: got[k] for k in expect["rejected"]} == expect["rejected"] and got["message"]
    else:
        assert "rejected" not in document


def check_finished(document: dict[str, Any]) -> None:
    result = document["result"]
    played = [c for t in result["tricks"] for c in t["cards"]]
    assert len(result["tricks"]) == 25 and Counter(played + result["discards"]) == Counter(DECK)
    assert sum(result["points"]) == sum(POINTS.values()) == 129
    assert sum(result["scores"]) == 0


def check_nothing_half_applied(shorter: Path, hand_file: dict[str, Any], document: dict[str, Any],
                               capsys: pytest.CaptureFixture[str]) -> None:
    """A refused command writes nothing: the outcome is the replay of the commands before it."""
    index = document["rejected"]["index"]
    shorter.write_text(json.dumps(dict(hand_file, commands=hand_file["commands"][:index])))
    code, out, _ = replay(shorter, capsys)
    clean = json.loads(out)
    assert code == 0 and clean["events"] == document["events"] and clean["result"] == document["result"]


def test_replay_as_a_seat_shows_its_own_packets_and_never_the_dealers_discards(
        capsys: pytest.CaptureFixture[str]) -> None:
    path = HANDS / "complete-fool-itself.json"
    code, out, _ = replay(path, capsys, "--as", "2")
    steps = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(steps) == 1 + len(json.loads(path.read_text())["commands"])
    assert steps[0]["view"]["hand"] == sorted(steps[0]["view"]["hand"], key=DECK.index)
    assert len(steps[0]["view"]["hand"]) == 10  # rounds 1 and 2
    assert all(step["view"]["discards"] is None for step in steps)
    assert steps[-1]["view"]["scores"] == [128, -64, -64]
    _, dealer_out, _ = replay(path, capsys, "--as", "0")
    assert json.loads(dealer_out.splitlines()[-1])["view"]["discards"] == ["8C", "9C", "TC"]


def test_replay_as_another_seat_hides_the_refused_commands_cards(capsys: pytest.CaptureFixture[str]) -> None:
    path = HANDS / "reject-bad-discard-honour.json"
    _, out, _ = replay(path, capsys, "--as", "1")
    rejected = json.loads(out.splitlines()[-1])["rejected"]
    assert rejected["code"] == "bad_discard" and "KC" not in rejected["message"]
    _, out, _ = replay(path, capsys, "--as", "0")
    assert "KC" in json.loads(out.splitlines()[-1])["rejected"]["message"]


@pytest.mark.parametrize("name", ["reject-must-trump", "reject-must-follow-suit",
                                  "reject-bad-declaration-honours-not-held"])
def test_replay_as_another_seat_is_not_told_a_refusal_reason_that_reveals_the_seats_cards(
        name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """must_trump says the seat holds a trump; must_follow_suit, the suit led."""
    path = HANDS / f"{name}.json"
    expected = json.loads(path.read_text())["expect"]["rejected"]
    refused_by = expected["seat"]
    _, out, _ = replay(path, capsys, "--as", str(refused_by))
    assert json.loads(out.splitlines()[-1])["rejected"]["code"] == expected["code"]
    code, out, _ = replay(path, capsys, "--as", str((refused_by + 1) % 3))
    rejected = json.loads(out.splitlines()[-1])["rejected"]
    assert code == 3 and rejected["seat"] == refused_by
    assert rejected["code"] == "refused" and expected["code"] not in rejected["message"]


def test_replay_as_a_seat_mitigati_does_not_have_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = replay(HANDS / "stopped-discard.json", capsys, "--as", "3")
    assert code == 2 and out == "" and "--as 3" in err


def test_the_installed_mighty_script_replays_a_mitigati_file() -> None:
    mighty = Path(sys.executable).with_name("mighty")
    done = subprocess.run([str(mighty), "replay", str(HANDS / "abandoned-spec-example.json")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0
    document = json.loads(done.stdout)
    # §9's abandoned example, field for field
    assert {"phase": document["phase"], "result": document["result"]} == {
        "phase": "abandoned",
        "result": {"dealer": 2, "bargain": {"session": 3, "payer": 1, "seller": 0, "amount": 8},
                   "tricks": [], "scores": [8, -8, 0]}}


def test_the_finished_output_example_of_mitigati_hand_file_md_replays_exactly(
        capsys: pytest.CaptureFixture[str]) -> None:
    """§2's input example completed into a whole hand: its replay is §9's finished example."""
    path = HANDS / "complete-spec-example.json"
    hand_file = json.loads(path.read_text())
    # the input is §2's example wherever §2 shows it
    assert hand_file["dealer"] == 0
    assert hand_file["packets"][0] == [["1D", "2D", "3D", "4D", "TB"], ["5D", "6D", "7D", "8D", "6B"],
                                       ["KD", "QD", "ND", "FD", "KB"]]
    assert hand_file["packets"][4] == [["T19", "T18", "T17", "9D", "9C", "TC", "2S", "1S"],
                                       ["T6", "T7", "T8", "1B", "2B"], ["T13", "T12", "T11", "TD", "2C"]]
    assert [len(h) for h in hand_file["hands"]] == [28, 25, 25]
    commands = hand_file["commands"]
    assert commands[:13] == [
        {"seat": 2, "type": "bargain", "action": "pay", "amount": 3},
        {"seat": 1, "type": "bargain", "action": "sell", "amount": 10},
        {"seat": 0, "type": "bargain", "action": "pass"},
        {"seat": 2, "type": "bargain", "action": "continue"},
        {"seat": 2, "type": "bargain", "action": "continue"},
        {"seat": 2, "type": "bargain", "action": "pass"},
        {"seat": 1, "type": "bargain", "action": "pass"},
        {"seat": 0, "type": "bargain", "action": "pass"},
        {"seat": 0, "type": "discard", "cards": ["TC", "2S", "1S"]},
        {"seat": 2, "type": "declare", "combinations": ["honours"]},
        {"seat": 1, "type": "declare", "combinations": []},
        {"seat": 0, "type": "declare", "combinations": []},
        {"seat": 2, "type": "play", "card": "KD"},
    ]
    assert len(commands) == 12 + 75  # "… 74 more plays …"

    code, out, _ = replay(path, capsys)
    assert code == 0
    document = json.loads(out)
    # §9, field by field in the spec's order
    assert list(document)[:2] == ["phase", "result"] and "rejected" not in document
    assert document["phase"] == "finished"
    result = document["result"]
    assert list(result) == ["dealer", "bargain", "discards", "declarations", "tricks", "fool",
                            "points", "scores"]
    assert result["dealer"] == 0
    assert result["bargain"] is None
    assert result["discards"] == ["TC", "2S", "1S"]
    assert result["declarations"] == [{"seat": 2, "name": "honours", "value": 10}]
    assert result["tricks"][0] == {"leader": 2, "cards": ["KD", "5D", "1D"], "winner": 2}
    assert len(result["tricks"]) == 25  # "… 25 in all …"
    assert all(t["winner"] != 1 for t in result["tricks"])  # seat 1 wins no trick
    assert result["fool"] == {"seat": 2, "trick": 9, "to": 0, "card": "5D", "paid_in": 9}
    assert result["points"] == [59, 0, 70]
    assert result["scores"] == [6, -53, 47]

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

from domain.mighty.rules import make_rules
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
    # docs/hand-files.md's mighty-3 exchange refusals and the two-pack variants' codes have files too
    by_rules = Counter((json.loads(p.read_text()).get("rules"), expectation(p).get("rejected", {}).get("code"))
                       for p in FILES if p.name.startswith("reject-"))
    assert by_rules[("mighty-3", "not_your_turn")] >= 3 and by_rules[("mighty-3", "bad_discard")] >= 2
    assert {"malformed_command", "card_not_in_hand", "bad_friend_call"} <= {
        code for (variant, code) in by_rules if variant == "mighty-8"}


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


def test_replay_as_another_seat_does_not_print_the_refused_commands_cards(
        capsys: pytest.CaptureFixture[str]) -> None:
    path = HANDS / "reject-card-not-in-hand.json"
    refused_by = json.loads(path.read_text())["expect"]["rejected"]["seat"]
    _, out, _ = replay_in_process(path, capsys, "--as", str(refused_by))
    own = json.loads(out.splitlines()[-1])["rejected"]
    played = json.loads(path.read_text())["commands"][own["index"]]["card"]
    assert played in own["message"]  # the seat that sent it is told which card
    other = (refused_by + 1) % 5
    code, out, _ = replay_in_process(path, capsys, "--as", str(other))
    rejected = json.loads(out.splitlines()[-1])["rejected"]
    assert code == 3 and rejected["code"] == own["code"] == "card_not_in_hand"
    assert played not in rejected["message"] and rejected["message"].startswith(f"A command of seat {refused_by}")


@pytest.mark.parametrize("name", ["reject-must-play-joker", "reject-must-follow-suit",
                                  "reject-joker-suit-required", "reject-illegal-first-lead"])
def test_replay_as_another_seat_is_not_told_a_refusal_reason_that_reveals_the_seats_cards(
        name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """must_play_joker says the seat holds the Joker, must_follow_suit that it holds the led
    suit (§8: other hands are secret); live, nobody but the sender hears of a refusal."""
    path = HANDS / f"{name}.json"
    expected = json.loads(path.read_text())["expect"]["rejected"]
    refused_by = expected["seat"]
    _, out, _ = replay_in_process(path, capsys, "--as", str(refused_by))
    assert json.loads(out.splitlines()[-1])["rejected"]["code"] == expected["code"]
    other = (refused_by + 1) % 5
    code, out, _ = replay_in_process(path, capsys, "--as", str(other))
    rejected = json.loads(out.splitlines()[-1])["rejected"]
    assert code == 3 and rejected["seat"] == refused_by
    assert rejected["code"] == "refused" and expected["code"] not in rejected["message"]


def test_replay_as_a_seat_that_does_not_exist_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = replay_in_process(HANDS / "complete-alone.json", capsys, "--as", "5")
    assert code == 2 and out == "" and "--as 5" in err


def test_a_file_that_cannot_be_read_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = replay_in_process(tmp_path / "missing.json", capsys)
    assert code == 2 and out == "" and "cannot read" in err


# ---------------------------------------------------------------- conformance to docs/hand-files.md

def _standard_file(commands: list[dict[str, Any]], **changes: Any) -> bytes:
    """The corpus's standard mighty-5 deal (``complete-alone.json``) with other commands."""
    document = json.loads((HANDS / "complete-alone.json").read_text())
    document.update(commands=commands, **changes)
    return json.dumps(document).encode()


def _replay_document(data: bytes) -> dict[str, Any]:
    from domain.mighty.handfile import output_of, parse
    from domain.mighty.handfile import replay as replay_file

    hand_file, rules = parse(data)
    document: dict[str, Any] = output_of(replay_file(hand_file, rules))
    return document


def test_the_result_fields_come_in_the_order_hand_file_md_shows(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/hand-files.md's output example lists declarer, contract, friend,
    declarer_side_points, made, scores, tricks; extra fields may follow."""
    code, out, _ = replay_in_process(HANDS / "complete-friend-card.json", capsys)
    assert code == 0
    document = json.loads(out)
    assert list(document)[:2] == ["phase", "result"] and list(document)[-1] == "events"
    assert list(document["result"]) == ["declarer", "contract", "friend", "declarer_side_points",
                                        "made", "scores", "tricks"]
    assert list(document["result"]["tricks"][0])[:3] == ["leader", "cards", "winner"]


_AUCTION = [{"seat": 0, "type": "bid", "points": 13, "trump": "H"}] + [
    {"seat": s, "type": "pass"} for s in range(1, 5)]
_CALLED = _AUCTION + [{"seat": 0, "type": "discard", "cards": ["4C", "3C", "2C"]},
                      {"seat": 0, "type": "call_friend", "friend": "QH"}]


@pytest.mark.parametrize("command", [
    {"seat": 0, "type": "play", "card": "KS", "suit": 5},           # suit: only a joker lead uses it
    {"seat": 0, "type": "play", "card": "KS", "suit": ["S"]},
    {"seat": 0, "type": "play", "card": "KS", "joker_call": "yes"},  # joker_call = on_ripper_lead
    {"seat": 0, "type": "play", "card": "KS", "v": "one"},           # not a hand-file field at all
], ids=["suit-int", "suit-list", "joker-call-string", "v-string"])
def test_a_field_a_play_does_not_use_is_ignored_whatever_its_type(command: dict[str, Any]) -> None:
    """docs/hand-files.md: "Fields a command does not use are ignored." A field of the wrong type
    is malformed only where the command uses it."""
    document = _replay_document(_standard_file(_CALLED + [command]))
    assert "rejected" not in document, document.get("rejected")
    assert document["events"][-1] == {"type": "card_played", "seat": 0, "card": "KS", "suit": None,
                                      "joker_call": False, "v": 1}


@pytest.mark.parametrize("take", [5, ["ZZ"], "4C"], ids=["int", "not-a-card", "string"])
def test_take_in_a_one_kitty_variant_discard_is_ignored(take: object) -> None:
    """`take` belongs to mighty-3's discard; in mighty-5 a discard does not use it."""
    discard = {"seat": 0, "type": "discard", "cards": ["4C", "3C", "2C"], "take": take}
    document = _replay_document(_standard_file(_AUCTION + [discard]))
    assert "rejected" not in document, document.get("rejected")
    assert document["events"][-1]["type"] == "cards_discarded"


@pytest.mark.parametrize(("command", "field"), [
    ({"seat": 0, "type": "play", "card": "3C", "joker_call": "yes"}, "joker_call"),
    ({"seat": 0, "type": "play", "card": "KS", "suit": 5}, "suit"),
], ids=["joker-call", "suit"])
def test_a_used_field_of_the_wrong_type_is_still_malformed(command: dict[str, Any], field: str) -> None:
    """Where a command does use a field, a wrong type stays ``malformed_command``: joker_call
    on a lead with option joker_call = declared, suit on a joker lead."""
    if field == "joker_call":  # seat 0 keeps the Ripper, wins trick 1 and leads it
        called = _AUCTION + [{"seat": 0, "type": "discard", "cards": ["4C", "2C", "KD"]},
                             {"seat": 0, "type": "call_friend", "friend": "none"}]
        trick = [{"seat": s, "type": "play", "card": c}
                 for s, c in ((0, "AC"), (1, "KC"), (2, "JC"), (3, "9C"), (4, "7C"))]
        data = _standard_file(called + trick + [command], options={"joker_call": "declared"})
    else:
        lead = {"seat": 0, "type": "play", "card": "KS"}
        follow = [{"seat": s, "type": "play", "card": c} for s, c in ((1, "9S"), (2, "6S"), (3, "3S"), (4, "2H"))]
        data = _standard_file(_CALLED + [lead, *follow, dict(command, seat=4, card="JK")])
    document = _replay_document(data)
    assert document["rejected"]["code"] == "malformed_command"
    assert field in document["rejected"]["message"]


def test_the_output_example_of_hand_file_md_replays_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    """``complete-spec-example.json`` completes the spec's example (its input shows the
    command shapes with elided hands): the printed result is the example's, field for field
    and in its order, and the first trick is the example's trick (plus our ``points``)."""
    example: dict[str, Any] = {
        "declarer": 0,
        "contract": {"points": 14, "trump": "NT"},
        "friend": 4,
        "declarer_side_points": 15,
        "made": True,
        "scores": [4, -2, -2, -2, 2],
        "tricks": [{"leader": 0, "cards": ["KH", "2H", "JK", "3H", "AH"], "winner": 4}],
    }
    code, out, _ = replay_in_process(HANDS / "complete-spec-example.json", capsys)
    assert code == 0
    document = json.loads(out)
    assert list(document) == ["phase", "result", "events"] and document["phase"] == "finished"
    result = document["result"]
    assert list(result) == list(example)
    assert {k: v for k, v in result.items() if k != "tricks"} == {k: v for k, v in example.items() if k != "tricks"}
    first = result["tricks"][0]
    assert {k: first[k] for k in ("leader", "cards", "winner")} == example["tricks"][0]
    assert first["points"] == 2

"""The players' guides (docs/rules/) say what the code does: every rule option with its
values and default, every variant's figures, the worked scores, Mitigati's fixed numbers
and declarations, all read from the guides' tables and compared with the rule sets."""

from __future__ import annotations

import re

import msgspec
import pytest

from domain.errors import MustTrump, RuleSetError
from domain.mighty.cards import points_of
from domain.mighty.events import AuctionWon
from domain.mighty.rules import OPTIONS, VARIANTS, RuleSet, make_rules
from domain.mighty.scoring import hand_scores
from domain.mitigati import play as mitigati_play
from domain.mitigati import rules as mitigati_rules
from domain.mitigati.cards import DECK as MITIGATI_DECK
from domain.mitigati.cards import POINTS as MITIGATI_POINTS
from domain.mitigati.declarations import best_honour_part
from domain.mitigati.events import Declaration
from domain.mitigati.scoring import card_points, declaration_payments
from tests.unit.helpers import bid, pass_, run, standard_deal
from tests.unit.markdown_docs import ROOT, Cell, tables_under

MIGHTY = (ROOT / "docs" / "rules" / "mighty.md").read_text(encoding="utf-8")
MITIGATI = (ROOT / "docs" / "rules" / "mitigati.md").read_text(encoding="utf-8")


def only_table(text: str, heading: str) -> list[list[Cell]]:
    tables = tables_under(text, heading)
    assert len(tables) >= 1, f"no table under {heading!r}"
    return tables[0]


def shown(value: object) -> str:
    """An option value as the docs and hand files write it (JSON booleans)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def number(text: str) -> int:
    return int(text.replace("−", "-").replace("+", ""))


# §9: option | values | default | section
OPTION_ROWS = {row[0].code[0]: row for row in only_table(MIGHTY, "9. Rule options")}


def test_the_options_table_names_every_option_of_the_code_and_no_other() -> None:
    assert list(OPTION_ROWS) == list(OPTIONS)
    fields = [f.name for f in msgspec.structs.fields(RuleSet) if f.name != "variant"]
    assert sorted(fields) == sorted(OPTION_ROWS)


@pytest.mark.parametrize("name", list(OPTIONS))
def test_each_option_lists_the_values_the_code_accepts_in_order(name: str) -> None:
    assert list(OPTION_ROWS[name][1].code) == [shown(v) for v in OPTIONS[name]]


@pytest.mark.parametrize("name", list(OPTIONS))
def test_each_option_default_is_the_rule_sets_default(name: str) -> None:
    default_cell = OPTION_ROWS[name][2]
    field = next(f for f in msgspec.structs.fields(RuleSet) if f.name == name)
    assert default_cell.code[0] == shown(field.default) == shown(OPTIONS[name][0])


def test_the_score_default_row_names_exactly_the_variants_that_default_to_penalty() -> None:
    cell = OPTION_ROWS["score"][2]
    assert cell.code[0] == "fixed" and cell.code[1] == "penalty"
    listed = set(cell.code[2:])
    assert listed == {name for name, v in VARIANTS.items() if v.default_score == "penalty"}
    for name in VARIANTS:
        expected = "penalty" if name in listed else "fixed"
        assert make_rules(name).score == expected


# §7: variant | players | cards | hand | kitty | bids | b | friends | default score
VARIANT_ROWS = {row[0].code[0]: row for row in only_table(MIGHTY, "7. Other table sizes")}


def test_the_variants_table_names_every_variant_of_the_code() -> None:
    assert list(VARIANT_ROWS) == list(VARIANTS)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_each_variants_figures_are_the_codes(name: str) -> None:
    spec = VARIANTS[name]
    row = [cell.text for cell in VARIANT_ROWS[name]]
    low, high = (int(x) for x in row[5].split("–"))
    assert (int(row[1]), int(row[2]), int(row[3]), int(row[4])) == (
        spec.players, len(spec.deck), spec.hand_size, spec.kitty_size)
    assert (low, high) == (spec.min_bid, spec.max_bid)
    assert row[6] == f"C − {spec.base_offset}"
    assert int(row[7]) == spec.max_friends
    assert VARIANT_ROWS[name][8].code == (spec.default_score,)
    assert spec.players * spec.hand_size + spec.kitty_size == len(spec.deck)


def test_every_variant_keeps_the_point_cards_the_guide_counts() -> None:
    """§1 and §10: 20 point cards with one pack, 40 with two."""
    for spec in VARIANTS.values():
        assert points_of(spec.deck) == 20 * spec.packs


def test_the_two_pack_figures_table_matches_the_code() -> None:
    rows = only_table(MIGHTY, "10. Six to eight players: two packs")
    for row in rows:
        spec = VARIANTS[row[0].code[0]]
        deck = int(row[1].text.rsplit("=", 1)[1])
        assert (deck, int(row[2].text), int(row[3].text), int(row[4].text)) == (
            len(spec.deck), spec.hand_size, spec.kitty_size, spec.hand_size)
    assert len(rows) == sum(1 for v in VARIANTS.values() if v.packs == 2)


# §6 worked scores: variant | score | contract | P | friend | scores
SCORE_ROWS = only_table(MIGHTY, "Worked scores")


@pytest.mark.parametrize("row", SCORE_ROWS, ids=lambda r: " ".join(c.text for c in r[:4]))
def test_each_worked_score_is_what_the_scoring_code_gives(row: list[Cell]) -> None:
    variant, score = row[0].code[0], row[1].code[0]
    points, trump = row[2].text.split()
    friends = tuple(int(s) for s in re.findall(r"\d+", row[4].text))
    expected = tuple(number(s) for s in row[5].text.split(","))
    rules = make_rules(variant, {"score": score})
    assert hand_scores(rules, declarer=0, friends=friends, contract=int(points), trump=trump,
                       taken=int(row[3].text)) == expected


def test_the_guide_has_a_worked_score_for_each_way_of_scoring() -> None:
    assert {row[1].code[0] for row in SCORE_ROWS} == set(OPTIONS["score"])


# Mitigati
def test_mitigati_has_no_options_as_its_guide_says() -> None:
    assert [f.name for f in msgspec.structs.fields(mitigati_rules.RuleSet)] == ["variant"]
    assert "no rule options" in MITIGATI
    with pytest.raises(RuleSetError):
        mitigati_rules.make_rules({"score": "fixed"})


def test_mitigati_fixed_numbers_in_the_guide_are_the_codes() -> None:
    rows = {row[0].text: int(row[1].text) for row in only_table(MITIGATI, "Options")}
    assert rows == {
        "players": mitigati_rules.PLAYERS,
        "rounds of packets": mitigati_rules.ROUNDS,
        "packet": mitigati_rules.PACKET,
        "the dealer's last packet": mitigati_rules.LAST_PACKET,
        "bargaining sessions": mitigati_rules.SESSIONS,
        "cards discarded by the dealer": mitigati_rules.DISCARD_COUNT,
        "tricks": mitigati_rules.TRICKS,
        "par": mitigati_rules.PAR,
    }
    assert sum(MITIGATI_POINTS[c] for c in MITIGATI_DECK) == 3 * mitigati_rules.PAR == 129


def test_mitigati_declaration_examples_are_what_the_code_judges() -> None:
    rows = tables_under(MITIGATI, "Declarations")[1]  # the second table: the examples
    assert rows
    for held, part, worth in rows:
        cards = held.code[0].split()
        best = best_honour_part(cards)
        names = [] if part.text == "nothing" else [n.strip() for n in part.text.split(",")]
        assert sorted(best) == sorted(names), held.text
        assert sum(best.values()) == int(worth.text), held.text


def test_the_guides_bidding_example_makes_seat_0_declarer_of_15_clubs() -> None:
    """§3's example: passes are final, so seats 2 and 4's early passes still count."""
    assert "seat 0 is\nthe declarer with the contract `15 C`" in MIGHTY
    events = run([standard_deal()], bid(0, "13 S"), bid(1, "14 S"), pass_(2), bid(3, "14 NT"),
                 pass_(4), bid(0, "15 C"), pass_(1), pass_(3))
    assert AuctionWon(declarer=0, points=15, trump="C") in events


def test_mitigatis_worked_trick_is_won_by_seat_0s_trump_for_seven_points() -> None:
    assert "Seat 2 leads `KD`" in MITIGATI and "**seat 0**" in MITIGATI
    assert mitigati_play.trick_winner(2, ("KD", "5D", "T3")) == 0
    assert card_points(("KD", "5D", "T3")) == 7
    with pytest.raises(MustTrump):  # seat 0, void in coins, may not throw off a suit card
        mitigati_play.check_play(("T3", "KS"), ("KD", "5D"), 0, "KS")
    assert mitigati_play.trick_winner(2, ("KD", "5D", "KS")) == 2  # without the trump


def test_mitigatis_worked_score_is_what_the_scoring_code_gives() -> None:
    assert "seat 0: 59 − 43 − 10 = **6**" in MITIGATI
    paid = declaration_payments([Declaration(seat=2, name="honours", value=10)])
    points = (59, 0, 70)
    assert tuple(p - mitigati_rules.PAR + d for p, d in zip(points, paid, strict=True)) == (6, -53, 47)

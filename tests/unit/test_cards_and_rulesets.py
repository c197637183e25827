"""docs/rules/mighty.md §1 (cards, points, notation), §7 (variants) and the rule options as data."""

from __future__ import annotations

from collections import Counter

import pytest

from domain.errors import RuleSetError
from domain.mighty.cards import (
    ALL_CARDS,
    POINTS_OF,
    RANK_OF,
    base_card,
    full_pack,
    is_card,
    is_joker,
    mighty_of,
    points_of,
    ripper_of,
    sorted_cards,
    suit_of,
)
from domain.mighty.rules import OPTIONS, VARIANTS, RuleSet, make_rules

# ---------------------------------------------------------------- notation (§1)


def test_a_card_is_rank_then_suit_and_the_joker_is_jk() -> None:
    assert is_card("AS") and is_card("TH") and is_card("2C") and is_card("JK")
    assert suit_of("TH") == "H" and suit_of("2C") == "C"
    assert suit_of("JK") is None and is_joker("JK")


@pytest.mark.parametrize("text", ["10H", "1S", "AX", "as", "J", "", "JOKER", "AS#3", "JK5", 7, None])
def test_anything_else_is_not_a_card(text: object) -> None:
    assert not is_card(text)


def test_with_two_packs_cards_carry_a_deck_suffix_and_jokers_a_number() -> None:
    assert is_card("AS#1") and is_card("AS#2") and is_card("JK1") and is_card("JK4")
    assert base_card("KH#2") == "KH" and suit_of("KH#2") == "H"
    assert is_joker("JK3")


def test_within_a_suit_two_is_lowest_and_ace_highest() -> None:
    ranks = [RANK_OF[r + "H"] for r in "23456789TJQKA"]
    assert ranks == sorted(ranks) and len(set(ranks)) == 13


def test_the_pack_is_52_cards_and_one_joker() -> None:
    pack = full_pack()
    assert len(pack) == 53 and len(set(pack)) == 53
    assert sum(is_joker(c) for c in pack) == 1


def test_every_ace_king_queen_jack_and_ten_is_worth_one_point_and_nothing_else_scores() -> None:
    pack = full_pack()
    assert points_of(pack) == 20
    assert {c for c in pack if POINTS_OF[c]} == {r + s for r in "AKQJT" for s in "SHDC"}
    assert POINTS_OF["JK"] == 0 and POINTS_OF["9S"] == 0


def test_the_mighty_is_the_ace_of_spades_or_the_ace_of_diamonds_when_spades_are_trump() -> None:
    assert [mighty_of(t) for t in ("H", "D", "C", "NT")] == ["AS"] * 4
    assert mighty_of("S") == "AD"


def test_the_ripper_is_the_three_of_clubs_or_the_three_of_spades_when_clubs_are_trump() -> None:
    assert [ripper_of(t) for t in ("S", "H", "D", "NT")] == ["3C"] * 4
    assert ripper_of("C") == "3S"
    assert ripper_of("H", "7") == "7C" and ripper_of("C", "7") == "7S"


def test_cards_sort_by_suit_then_from_high_to_low_with_the_joker_last() -> None:
    assert sorted_cards(["2S", "JK", "AH", "AS", "3C"]) == ("AS", "2S", "AH", "3C", "JK")


# ---------------------------------------------------------------- variants (§7)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_players_times_hand_plus_kitty_is_the_deck_size_in_every_variant(name: str) -> None:
    spec = VARIANTS[name]
    assert spec.players * spec.hand_size + spec.kitty_size == len(spec.deck)
    assert len(set(spec.deck)) == len(spec.deck)
    assert all(is_card(c) for c in spec.deck)


@pytest.mark.parametrize(
    ("name", "players", "deck", "hand", "kitty", "bids", "offset"),
    [
        ("mighty-5", 5, 53, 10, 3, (13, 20), 12),
        ("mighty-4", 4, 51, 12, 3, (13, 20), 12),
        ("mighty-3", 3, 53, 16, 5, (10, 20), 9),
        ("mighty-4-short", 4, 43, 10, 3, (12, 20), 11),
        ("mighty-3-short", 3, 33, 10, 3, (11, 20), 10),
        ("mighty-6", 6, 108, 17, 6, (25, 40), 24),
        ("mighty-7", 7, 104, 14, 6, (25, 40), 24),
        ("mighty-8", 8, 102, 12, 6, (25, 40), 24),
    ],
)
def test_each_variant_has_the_table_figures_of_section_7(
    name: str, players: int, deck: int, hand: int, kitty: int, bids: tuple[int, int], offset: int
) -> None:
    spec = VARIANTS[name]
    assert (spec.players, len(spec.deck), spec.hand_size, spec.kitty_size) == (players, deck, hand, kitty)
    assert (spec.min_bid, spec.max_bid, spec.base_offset) == (*bids, offset)


def test_mighty_5_plays_the_whole_pack() -> None:
    assert Counter(VARIANTS["mighty-5"].deck) == Counter(full_pack())


def test_mighty_4_removes_the_two_of_hearts_and_the_two_of_clubs() -> None:
    assert set(full_pack()) - set(VARIANTS["mighty-4"].deck) == {"2H", "2C"}


def test_mighty_4_short_removes_every_two_every_four_and_the_threes_of_hearts_and_diamonds() -> None:
    gone = set(full_pack()) - set(VARIANTS["mighty-4-short"].deck)
    assert gone == {r + s for r in "24" for s in "SHDC"} | {"3H", "3D"}


def test_mighty_3_short_removes_every_two_to_six_and_its_ripper_is_the_seven() -> None:
    spec = VARIANTS["mighty-3-short"]
    assert set(full_pack()) - set(spec.deck) == {r + s for r in "23456" for s in "SHDC"}
    assert spec.ripper_rank == "7"


def test_six_to_eight_players_use_two_packs_and_four_jokers() -> None:
    for name, minus in (("mighty-6", set()), ("mighty-7", {"2C", "2H"}), ("mighty-8", {"2C", "2H"})):
        deck = VARIANTS[name].deck
        assert sum(is_joker(c) for c in deck) == 4
        for card in minus:
            assert f"{card}#1" not in deck and f"{card}#2" not in deck
    eight = VARIANTS["mighty-8"].deck
    assert sum(base_card(c) == "2D" for c in eight) == 1 and sum(base_card(c) == "2S" for c in eight) == 1


def test_every_variant_holds_twenty_point_cards_per_pack() -> None:
    for spec in VARIANTS.values():
        packs = 2 if spec.players >= 6 else 1
        assert points_of(spec.deck) == 20 * packs


def test_the_variants_where_the_declarer_always_plays_alone_allow_no_friend() -> None:
    assert VARIANTS["mighty-3"].max_friends == 0 and VARIANTS["mighty-3-short"].max_friends == 0
    assert VARIANTS["mighty-5"].max_friends == 1 and VARIANTS["mighty-6"].max_friends == 2


def test_every_variant_has_the_notation_of_cards_in_its_deck() -> None:
    assert all(c in ALL_CARDS for spec in VARIANTS.values() for c in spec.deck)


# ---------------------------------------------------------------- rule sets


def test_the_default_rule_set_is_mighty_5_with_the_first_value_of_every_option() -> None:
    rules = make_rules()
    assert rules.variant == "mighty-5"
    assert rules.options() == {name: values[0] for name, values in OPTIONS.items()}


def test_every_option_of_the_rules_is_a_field_of_the_rule_set() -> None:
    assert set(OPTIONS) == set(RuleSet.__struct_fields__) - {"variant"}


@pytest.mark.parametrize(("name", "values"), list(OPTIONS.items()))
def test_every_allowed_value_of_every_option_is_accepted(name: str, values: tuple[object, ...]) -> None:
    for value in values:
        assert getattr(make_rules("mighty-5", {name: value}), name) == value


def test_the_short_variants_default_to_the_penalty_tally() -> None:
    assert make_rules("mighty-4-short").score == "penalty"
    assert make_rules("mighty-3-short").score == "penalty"
    assert make_rules("mighty-4-short", {"score": "fixed"}).score == "fixed"


def test_an_unknown_variant_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(RuleSetError) as caught:
        make_rules("mighty-9")
    assert caught.value.code == "unknown_variant"
    assert "mighty-9" in caught.value.message and "mighty-5" in caught.value.message


def test_an_unknown_option_is_refused_naming_it() -> None:
    with pytest.raises(RuleSetError) as caught:
        make_rules("mighty-5", {"giruda": "S"})
    assert caught.value.code == "unknown_option" and "giruda" in caught.value.message


@pytest.mark.parametrize(
    ("name", "value"),
    [("score", "double"), ("pass_is_final", "yes"), ("kitty_shown", 1), ("first_bidder", None),
     ("misdeal_claim", 0), ("next_dealer", "right")],
)
def test_a_bad_option_value_is_refused_naming_the_allowed_values(name: str, value: object) -> None:
    with pytest.raises(RuleSetError) as caught:
        make_rules("mighty-5", {name: value})
    assert caught.value.code == "bad_option" and name in caught.value.message


def test_the_fingerprint_is_stable_for_equal_rule_sets() -> None:
    first = make_rules("mighty-5", {"score": "pagat", "kitty_shown": False})
    second = make_rules("mighty-5", {"kitty_shown": False, "score": "pagat"})
    assert first.fingerprint() == second.fingerprint()
    assert len(first.fingerprint()) == 16
    # Pinned: a stored hand names its rules by this digest, so it must never drift.
    assert make_rules().fingerprint() == "eb0bfed0214545d0"


def test_the_fingerprint_changes_with_every_option_and_with_the_variant() -> None:
    seen = {make_rules().fingerprint()}
    for name, values in OPTIONS.items():
        for value in values[1:]:
            seen.add(make_rules("mighty-5", {name: value}).fingerprint())
    seen.add(make_rules("mighty-4").fingerprint())
    changed = sum(len(values) - 1 for values in OPTIONS.values()) + 1
    assert len(seen) == 1 + changed


def test_a_rule_set_is_frozen_data() -> None:
    rules = make_rules()
    with pytest.raises(AttributeError):
        rules.score = "pagat"  # type: ignore[misc]

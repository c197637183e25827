"""Bots have names of their own (domain/bots.py ``bot_name``): the same for a table's seat
wherever computed, never shared by two bots of a level at one table."""

from __future__ import annotations

import pytest

from domain.bots import BOT_NAMES, LEVELS, bot_name


@pytest.mark.parametrize("level", LEVELS)
def test_the_bots_of_a_level_at_a_table_of_eight_all_have_different_names(level: str) -> None:
    for table in ("t1", "t2", "tabc123def456"):
        names = [bot_name(level, table, seat) for seat in range(8)]
        assert len(set(names)) == 8
        assert set(names) <= set(BOT_NAMES[level])


def test_a_seats_bot_name_is_the_same_every_time_and_depends_on_the_table() -> None:
    assert bot_name("beginner", "t1", 3) == bot_name("beginner", "t1", 3)
    assert len({bot_name("beginner", f"t{n}", 0) for n in range(40)}) > 1


def test_the_levels_name_their_bots_from_different_lists() -> None:
    lists = [set(BOT_NAMES[level]) for level in LEVELS]
    assert not (lists[0] & lists[1]) and not (lists[1] & lists[2]) and not (lists[0] & lists[2])


def test_a_level_without_a_list_is_named_after_itself_and_its_seat() -> None:
    assert bot_name("grandmaster", "t1", 0) == "grandmaster bot 1"
    # one player per level and name: two seats of a table never share a name
    assert len({bot_name("grandmaster", "t1", seat) for seat in range(8)}) == 8

"""The games a table can run: the one module outside the game packages that names them.

Everything else (the table, the codec, the audit, the projections, the CLI, the random
players) asks this module for a ``Game`` (``domain/games.py``) and calls it; a new game
is a new package with a ``game.py`` and one line here.
"""

from __future__ import annotations

from typing import Any, Final

from domain.games import AnyGame, Rules
from domain.handfiles import rules_named
from domain.mighty.game import MIGHTY
from domain.mitigati.game import MITIGATI

# A new game: its package (the layout of docs/architecture.md, "Games") and one line here.
GAMES: Final[dict[str, AnyGame]] = {MIGHTY.name: MIGHTY, MITIGATI.name: MITIGATI}
DEFAULT: Final[AnyGame] = MIGHTY  # a variant, a hand file or a table naming no other game

_BY_VARIANT: Final[dict[str, AnyGame]] = {
    name: game for game in GAMES.values() for name in (game.name, *game.variants)
}

_BY_RULES: Final[dict[type, AnyGame]] = {game.rules_type: game for game in GAMES.values()}
_BY_EVENT: Final[dict[type, AnyGame]] = {
    cls: game for game in GAMES.values() for cls in (game.created_type, *game.hand_events)
}


def variants() -> tuple[str, ...]:
    """Every name ``CreateTable`` takes: each game's rule sets (``Game.variants``), in the
    order of ``GAMES``."""
    return tuple(name for game in GAMES.values() for name in game.variants)


def game_of(rules: Rules) -> AnyGame:
    """The game a rule set belongs to."""
    return _BY_RULES[type(rules)]


def game_named(variant: str) -> AnyGame:
    """The game of a ``CreateTable`` variant: one of a game's ``variants`` (``mighty-5``,
    ``mitigati``) or its own name; any other name goes to the default game, whose
    ``make_rules`` refuses it."""
    return _BY_VARIANT.get(variant, DEFAULT)


def game_of_event(event: object) -> AnyGame | None:
    """The game whose event this is (its table's creation or a hand event), or None for
    an event of the table itself."""
    return _BY_EVENT.get(type(event))


def game_of_hand_file(data: bytes) -> AnyGame:
    """The game a hand file is for, by its ``rules`` field (a broken file goes to the
    default game, whose parser says what is wrong with it)."""
    named = rules_named(data)
    return game_named(named) if isinstance(named, str) else DEFAULT


def rules_of_directory(fields: dict[str, Any]) -> Rules:
    """The rule set of a lobby entry, from the fields its game's ``directory_fields`` put
    there (an entry written before the games had fields: the default game's first)."""
    for game in GAMES.values():
        rules: Rules | None = game.directory_rules(fields)
        if rules is not None:
            return rules
    default: Rules = DEFAULT.make_rules(variants()[0], {})
    return default

"""`mighty bench domain`: complete random hands through the pure domain, one process.

Each step asks ``legal_commands`` for the seat to act, picks one at random, decides it and
folds the events, exactly as a bot would. Prints one JSON object. ``--variant`` is any
``CreateTable`` variant (``mighty-5``, ``mitigati``, ...); the game (``domain.registry``)
plays it. The pick (``services.players.pick_by_kind``) is first a kind of command, then
one of that kind (``Game.command_kinds``: Mitigati's bargains by pass, continue, pay,
sell), since the 2 × 129 listed amounts would otherwise strike a bargain in nearly every
hand.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from typing import Any

from domain.games import Rules
from domain.registry import game_named, game_of
from services.players import pick_by_kind


def play_random_hand(rng: random.Random, rules: Rules) -> tuple[Any, int]:
    """Deal at random and play random legal commands of the rules' game until the hand ends."""
    game = game_of(rules)
    deck = list(game.deck(rules))
    rng.shuffle(deck)
    dealer = rng.randrange(game.players(rules))
    evolve, decide, to_act = game.evolve, game.decide, game.to_act  # bound once: the hot loop
    legal_commands, kinds_of, is_terminal = game.legal_commands, game.command_kinds, game.is_terminal
    state = evolve(None, game.deal(rules, tuple(deck), dealer=dealer, hand_no=0,
                                   previous_declarer=None, commitment="", salt=""))
    commands = 0
    while not is_terminal(state):
        seat = to_act(state)
        assert seat is not None
        command = pick_by_kind(rng, kinds_of(legal_commands(state, seat)))
        for event in decide(state, command):
            state = evolve(state, event)
        commands += 1
    return state, commands


def run(hands: int, seed: int, variant: str) -> dict[str, object]:
    rng = random.Random(seed)
    game = game_named(variant)
    rules = game.make_rules(variant, {})
    commands = redeals = 0
    started = time.perf_counter()
    for _ in range(hands):
        state, count = play_random_hand(rng, rules)
        redeals += game.redealt(state)
        commands += count
    elapsed = time.perf_counter() - started
    return {
        "bench": "domain",
        "variant": variant,
        "hands": hands,
        "redeals" if variant != "mitigati" else "abandoned": redeals,
        "commands": commands,
        "seconds": round(elapsed, 3),
        "hands_per_s": round(hands / elapsed, 1),
        "commands_per_s": round(commands / elapsed, 1),
        "python": platform.python_version(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mighty bench domain")
    parser.add_argument("--hands", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--variant", default="mighty-5")
    parser.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.hands, args.seed, args.variant)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

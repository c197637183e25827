"""`mighty bench domain`: complete random hands through the pure domain, one process.

Each step asks ``legal_commands`` for the seat to act, picks one at random, decides it and
folds the events, exactly as a bot would. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time

from domain.hand import deal_event, decide, evolve
from domain.legal import legal_commands
from domain.rules import RuleSet, make_rules
from domain.state import Finished, HandState, Redeal, to_act


def play_random_hand(rng: random.Random, rules: RuleSet) -> tuple[HandState, int]:
    """Deal at random and play random legal commands until the hand ends."""
    spec = rules.spec
    deck = list(spec.deck)
    rng.shuffle(deck)
    size, n = spec.hand_size, spec.players
    hands = tuple(tuple(deck[i * size:(i + 1) * size]) for i in range(n))
    state: HandState = evolve(None, deal_event(rules, dealer=rng.randrange(n), hands=hands,
                                               kitty=tuple(deck[n * size:])))
    commands = 0
    over = (Finished, Redeal)  # a tuple: isinstance on a union type is slower
    uniform = rng.random
    while not isinstance(state, over):
        seat = to_act(state)
        assert seat is not None
        legal = legal_commands(state, seat)
        command = legal[int(uniform() * len(legal))]  # uniform, like rng.choice, cheaper
        for event in decide(state, command):
            state = evolve(state, event)
        commands += 1
    return state, commands


def run(hands: int, seed: int, variant: str) -> dict[str, object]:
    rng = random.Random(seed)
    rules = make_rules(variant)
    commands = redeals = 0
    started = time.perf_counter()
    for _ in range(hands):
        state, count = play_random_hand(rng, rules)
        commands += count
        redeals += isinstance(state, Redeal)
    elapsed = time.perf_counter() - started
    return {
        "bench": "domain",
        "variant": variant,
        "hands": hands,
        "redeals": redeals,
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

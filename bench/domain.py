"""`mighty bench domain`: complete random hands through the pure domain, one process.

Each step asks ``legal_commands`` for the seat to act, picks one at random, decides it and
folds the events, exactly as a bot would. Prints one JSON object. ``--variant mitigati``
plays Mitigati hands (``domain.mitigati``); there the pick (``services.players.pick_by_kind``) is first a kind of command
(pass, continue, pay, sell; or the discard, declaration or play), then one of that kind,
since the 2 × 129 listed amounts would otherwise strike a bargain in nearly every hand.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time

from domain.mighty.hand import deal_event, decide, evolve
from domain.mighty.legal import legal_commands
from domain.mighty.rules import RuleSet, make_rules
from domain.mighty.state import Finished, HandState, Redeal, to_act
from domain.mitigati.cards import DECK as MITIGATI_DECK
from domain.mitigati.decider import deal_event as mitigati_deal
from domain.mitigati.decider import decide as mitigati_decide
from domain.mitigati.decider import evolve as mitigati_evolve
from domain.mitigati.decider import packets_from_order
from domain.mitigati.legal import legal_commands as mitigati_legal
from domain.mitigati.rules import make_rules as mitigati_rules
from domain.mitigati.state import Abandoned, MitigatiState, Packets, is_terminal
from domain.mitigati.state import to_act as mitigati_to_act
from services.players import pick_by_kind


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


def random_packets(rng: random.Random, dealer: int) -> Packets:
    """A shuffled tarot deck cut into mitigati-hand-file.md §2's packets."""
    deck = list(MITIGATI_DECK)
    rng.shuffle(deck)
    return packets_from_order(tuple(deck), dealer)


def play_random_mitigati(rng: random.Random) -> tuple[MitigatiState, int]:
    """Deal a random Mitigati hand and play random legal commands until it ends."""
    dealer = rng.randrange(3)
    state: MitigatiState = mitigati_evolve(None, mitigati_deal(
        mitigati_rules(), dealer=dealer, packets=random_packets(rng, dealer)))
    commands = 0
    while not is_terminal(state):
        seat = mitigati_to_act(state)
        assert seat is not None
        command = pick_by_kind(rng, mitigati_legal(state, seat))
        for event in mitigati_decide(state, command):
            state = mitigati_evolve(state, event)
        commands += 1
    return state, commands


def run(hands: int, seed: int, variant: str) -> dict[str, object]:
    rng = random.Random(seed)
    rules = None if variant == "mitigati" else make_rules(variant)
    commands = redeals = 0
    started = time.perf_counter()
    for _ in range(hands):
        if rules is None:
            ended, count = play_random_mitigati(rng)
            redeals += isinstance(ended, Abandoned)
        else:
            state, count = play_random_hand(rng, rules)
            redeals += isinstance(state, Redeal)
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

"""Write the hand-file corpus of ``tests/hands/`` (run: ``python tests/hands/make_corpus.py``).

Each file is a hand file (docs/hand-files.md) with its expected outcome embedded under
``"expect"`` (extra fields are allowed); a file that must not even be JSON gets a sibling
``NAME.expect.json``. The expectations below were worked out by hand from docs/rules/mighty.md, trick
by trick — the comments show the reckoning — and never copied from the engine's output.
The plays of a trick are written in order from its leader; a trick's leader is the previous
trick's expected winner, so a wrong expectation shows up as a refused command.

Expectation keys: ``exit``; ``phase``; ``to_act``; ``result`` (keys that must match);
``absent`` (result keys that must not be there); ``winners`` (each trick's winner);
``rejected`` (``index``, ``seat``, ``code``); ``redeal``; ``events_include`` (partial
events that must appear); ``error`` (words the exit-2 message must contain).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FORMAT = "mighty-hand/1"

# ---------------------------------------------------------------- deals

# mighty-5, seat 0 deals. Each seat is long in a suit or two.
STANDARD = [
    "AS KS QS JS TS AH KH AD KD AC",
    "9S 8S 7S QH JH TH QD JD KC QC",
    "6S 5S 4S 9H 8H 7H TD 9D JC TC",
    "3S 2S 6H 5H 4H 8D 7D 6D 9C 8C",
    "JK 3H 2H 5D 4D 3D 2D 7C 6C 5C",
]
STANDARD_KITTY = "4C 3C 2C"

# mighty-4 (no 2H, no 2C): seat 0 holds the Joker and eleven spades.
FOUR = [
    "JK AS KS QS JS TS 9S 8S 7S 6S 5S 4S",
    "KH QH JH TH 9H 8H 7H 6H 5H 4H 3H AD",
    "KD QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D",
    "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C",
]
FOUR_KITTY = "3S 2S AH"

# mighty-3-short (no 2-6): 33 cards, 10 each, kitty 3.
THREE_SHORT = [
    "AS KS QS JS TS 9S 8S 7S AH KH",
    "QH JH TH 9H 8H 7H AD KD QD JD",
    "TD 9D 8D 7D AC KC QC JC TC JK",
]
THREE_SHORT_KITTY = "9C 8C 7C"

# mighty-4-short (no 2s, no 4s, no 3H 3D): 43 cards, 10 each, kitty 3.
FOUR_SHORT = [
    "AS KS QS JS TS 9S 8S 7S AH KH",
    "6S 5S 3S QH JH TH 9H 8H AD KD",
    "7H 6H 5H QD JD TD 9D 8D 7D 6D",
    "JK 5D AC KC QC JC TC 9C 8C 7C",
]
FOUR_SHORT_KITTY = "6C 5C 3C"

# mighty-8 (docs/rules/mighty.md §10): in every suit, seat s holds the cards at places s, s + 8 and
# s + 16 of A#1 A#2 K#1 K#2 Q#1 Q#2 J#1 J#2 T#1 T#2 9#1 ... 3#1 3#2, so each seat holds
# three cards of each suit ("tiers": top, middle, low) and everyone can always follow. The
# kitty holds 2S#1, 2D#1 and the four jokers, which the declarer discards: no joker plays.
_LADDER = [f"{r}#{p}" for r in "AKQJT9876543" for p in (1, 2)]


def _eight_hands() -> list[str]:
    return [" ".join(_LADDER[i][0] + s + _LADDER[i][1:] for s in "SHDC" for i in (seat, seat + 8, seat + 16))
            for seat in range(8)]


EIGHT = _eight_hands()
EIGHT_KITTY = "2S#1 2D#1 JK1 JK2 JK3 JK4"


def _tier(suit: str, tier: int) -> list[str]:
    """The cards of one tier of a suit, in seat order 0..7."""
    return [_LADDER[seat + 8 * tier][0] + suit + _LADDER[seat + 8 * tier][1:] for seat in range(8)]


def _from(leader: int, cards: list[str]) -> str:
    """A trick's cards (given in seat order) in play order from its leader."""
    return " ".join(cards[(leader + i) % 8] for i in range(8))


def _mixed(suit: str, leader_tier: int, others_tier: int, leader: int) -> list[str]:
    cards = _tier(suit, others_tier)
    cards[leader] = _tier(suit, leader_tier)[leader]
    return cards


# Hearts trump, seat 0 leads. Seats 0 and 1 hold the aces and tens (seat 0 the #1 copies,
# seat 1 the #2 copies), so one of them wins every trick: the first played of the two
# identical top cards, or the only top card when the other leads low.
EIGHT_LINE = [
    _from(0, _tier("S", 0)),          # 1: AS#1 and AS#2 are both Mighty: the first, seat 0 (8 pts)
    _from(0, _tier("S", 1)),          # 2: TS#1 before TS#2: seat 0 (2)
    _from(0, _mixed("C", 2, 0, 0)),   # 3: seat 0 leads 6C#1, AC#2 is the top club: seat 1 (7)
    _from(1, ["AC#1", "TC#2", "9C#1", "9C#2", "8C#1", "8C#2", "7C#1", "7C#2"]),  # 4: seat 1 leads
    # TC#2; seat 0's AC#1 wins (2)
    _from(0, ["TC#1", "6C#2", "5C#1", "5C#2", "4C#1", "4C#2", "3C#1", "3C#2"]),  # 5: seat 0 (1)
    _from(0, _mixed("D", 2, 0, 0)),   # 6: seat 0 leads 6D#1, AD#2: seat 1 (7)
    _from(1, ["AD#1", "TD#2", "9D#1", "9D#2", "8D#1", "8D#2", "7D#1", "7D#2"]),  # 7: seat 0 (2)
    _from(0, ["TD#1", "6D#2", "5D#1", "5D#2", "4D#1", "4D#2", "3D#1", "3D#2"]),  # 8: seat 0 (1)
    _from(0, _mixed("H", 2, 0, 0)),   # 9: seat 0 leads 6H#1, AH#2: seat 1 (7)
    _from(1, _tier("S", 2)),          # 10: 6S#2 before 6S#1: seat 1 (0)
    _from(1, ["AH#1", "TH#2", "9H#1", "9H#2", "8H#1", "8H#2", "7H#1", "7H#2"]),  # 11: seat 0 (2)
    _from(0, ["TH#1", "6H#2", "5H#1", "5H#2", "4H#1", "4H#2", "3H#1", "3H#2"]),  # 12: seat 0 (1)
]
EIGHT_WINNERS = [0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0]
# Seat 0 takes 8+2+2+1+2+1+2+1 = 19 points, seat 1 7+7+7 = 21; the discards none.

# mighty-3 (16 each, a kitty of 5), the deal of tests/unit/test_kitty_exchange_three_players.py.
THREE = [
    "AS KS QS JS TS 9S AH KH QH JH AD KD QD AC KC QC",
    "8S 7S 6S 5S TH 9H 8H 7H JD TD 9D 8D JC TC 9C 8C",
    "4S 3S 2S 6H 5H 4H 3H 2H 7D 6D 5D 4D 7C 6C 5C 4C",
]
THREE_KITTY = "JK 3D 2D 3C 2C"

# docs/hand-files.md's output example, made real: seat 4 deals, seat 0 (left of the dealer)
# bids 13 S, discards the kitty 2C 4D 5H, changes to NT (14), calls AH (seat 4's). Each
# seat's hand is the column of its cards in SPEC_LINE below.
SPEC = [
    "KH 2D 6D AS KS AC KC QH QS JC",
    "2H KD 7D 3S 6S 3C 7C 4H JS QC",
    "JK 3D 8D 4S 7S 4C 8C 6H TS TH",
    "3H 5D 9D 5S 8S 5C 9C 7H 9H JH",
    "AH AD QD 2S 9S 6C TC 8H JD TD",
]
SPEC_KITTY = "2C 4D 5H"

# ---------------------------------------------------------------- lines of play

# Seat 0 declares hearts, discards the kitty and wins every trick but the last with top
# spades then hearts; seat 4 keeps the Joker to the last trick, where it has no power and
# the queen of hearts (seat 1) trumps the ace of clubs. Seat 0 takes 18 points, seat 1 2.
LINE = [
    "AS 9S 6S 3S 5D", "KS 8S 5S 2S 4D", "QS 7S 4S 8D 3D", "JS QD TD 7D 2D", "TS JD 9D 6D 7C",
    "AH TH 7H 4H 2H", "KH JH 8H 5H 3H", "AD QC TC 8C 5C", "KD KC JC 9C 6C", "AC QH 9H 6H JK",
]
LINE_WINNERS = [0] * 9 + [1]
# The same cards in no trump: nothing trumps the ace of clubs, seat 0 takes all 20.
LINE_NT_WINNERS = [0] * 10

# Seat 0 discards 4C 2C KD and keeps the Ripper. Seat 4 trumps the first trick (the
# first-trick friend); the Ripper lead of trick 8 forces out the Joker, powerless, and the
# king of clubs wins it; seat 1's jack of hearts trumps the last trick.
# Points: seat 0 takes 3+1+1+2+3+2+2 = 14 (+1 discarded, the KD), seat 4 1, seat 1 2+2.
FIRST_TRICK_LINE = [
    "KS 9S 6S 3S 2H", "5D AD QD TD 8D", "AS 8S 5S 2S 4D", "QS 7S 4S 7D 3D", "JS JD 9D 6D 2D",
    "TS QC TC 8C 5C", "AH TH 7H 4H 3H", "3C KC JC 9C JK", "QH 9H 6H 7C KH", "AC JH 8H 5H 6C",
]
FIRST_TRICK_WINNERS = [4, 0, 0, 0, 0, 0, 0, 1, 0, 1]

# Seat 0 discards 4C 2C KD and keeps the Ripper: LINE's first eight tricks, then the Ripper
# calls the Joker (forced out, powerless) and seat 1 takes the last two tricks (4 points).
# Seat 0: 15 points in tricks + 1 discarded = 16.
RIPPER_LINE = LINE[:8] + ["3C KC JC 9C JK", "QH 9H 6H 6C AC"]
RIPPER_WINNERS = [0] * 8 + [1, 1]

# joker_call = declared: the Ripper lead of trick 2 declares no call, so the Joker keeps
# its power and wins. Seat 0: 15 points in tricks + the KD discarded = 16.
DECLARED_LINE = [
    "AC KC JC 9C 7C", "3C? QC TC 8C JK", "5D AD QD TD 8D", "AS 9S 6S 3S 4D", "KS 8S 5S 2S 3D",
    "QS 7S 4S 7D 2D", "JS JD 9D 6D 6C", "AH TH 7H 4H 2H", "KH JH 8H 5H 3H", "TS QH 9H 6H 5C",
]
DECLARED_WINNERS = [0, 4, 0, 0, 0, 0, 0, 0, 0, 1]

# mighty-4, spades trump: the Joker led to the first trick names spades; nobody else holds
# a spade, so the powerless Joker wins (KH KD AC: 3 points). Seat 0 then runs its spades;
# seat 1 keeps the Mighty (AD with spades trump) for the last trick.
# Seat 0 takes 3+4+4+4+2+1 = 18, seat 1 (the friend, AD called) 1, the discarded AH 1.
FOUR_LINE = [
    "JK/S KH KD AC", "AS QH QD KC", "KS JH JD QC", "QS TH TD JC", "JS 9H 9D TC", "TS 8H 8D 9C",
    "9S 7H 7D 8C", "8S 6H 6D 7C", "7S 5H 5D 6C", "6S 4H 4D 5C", "5S 3H 3D 4C", "4S AD 2D 3C",
]
FOUR_WINNERS = [0] * 11 + [1]

# The example's line, no trump. Trick 1 is the example's own: KH 2H JK 3H AH, the Joker
# powerless in trick 1, the friend's AH wins (2 points, and reveals seat 4). Seat 4 then
# cashes AD (AD KD: 2) and QD (1); its 2S lets seat 0's Mighty in (AS: 1); seat 0 runs
# KS (1), AC (1), KC (KC TC: 2), QH (1), and QS, which seats 3 and 4, out of spades,
# cannot beat (QS JS TS JD: 4). The last trick: JC led, seat 1's QC wins JC QC TH JH TD (5).
# Side: 2 + 2 + 1 + 1 + 1 + 1 + 2 + 1 + 4 = 15, defenders 5; the discards hold no points.
SPEC_LINE = [
    "KH 2H JK 3H AH", "AD 2D KD 3D 5D", "QD 6D 7D 8D 9D", "2S AS 3S 4S 5S", "KS 6S 7S 8S 9S",
    "AC 3C 4C 5C 6C", "KC 7C 8C 9C TC", "QH 4H 6H 7H 8H", "QS JS TS 9H JD", "JC QC TH JH TD",
]
SPEC_WINNERS = [4, 4, 4, 0, 0, 0, 0, 0, 0, 1]

# mighty-3-short, spades trump (the Mighty is AD, the Ripper 7C — discarded). Seat 0 leads
# its two top hearts (no trump on the first trick), then spades; seat 2's Joker wins trick 9
# over a trump; seat 1's Mighty wins the last. Seat 0 takes 3+3+1+1+1+3+3+2 = 17.
THREE_SHORT_LINE = [
    "AH QH TC", "KH JH JC", "AS 7H 7D", "KS 8H 8D", "QS 9H 9D", "JS TH TD", "TS JD QC",
    "9S QD KC", "8S KD JK", "AC 7S AD",
]
THREE_SHORT_WINNERS = [0] * 8 + [2, 1]


# ---------------------------------------------------------------- commands


def split(text: str) -> list[str]:
    return text.split()


def bid(seat: int, points: int, trump: str) -> dict[str, Any]:
    return {"seat": seat, "type": "bid", "points": points, "trump": trump}


def pass_(seat: int) -> dict[str, Any]:
    return {"seat": seat, "type": "pass"}


def auction(first: int, players: int, declarer: int, points: int, trump: str) -> list[dict[str, Any]]:
    """From the first bidder round the table: the declarer bids, everyone else passes."""
    seats = [(first + i) % players for i in range(players)]
    return [bid(s, points, trump) if s == declarer else pass_(s) for s in seats]


def exchange(declarer: int, discards: str, friend: str, trump: str | None = None,
             lead_suit: str | None = None) -> list[dict[str, Any]]:
    commands: list[dict[str, Any]] = [{"seat": declarer, "type": "discard", "cards": split(discards)}]
    if trump is not None:
        commands.append({"seat": declarer, "type": "change_trump", "trump": trump})
    call: dict[str, Any] = {"seat": declarer, "type": "call_friend", "friend": friend}
    if lead_suit is not None:
        call["lead_suit"] = lead_suit
    return commands + [call]


def plays(first_leader: int, players: int, tricks: list[str], winners: list[int]) -> list[dict[str, Any]]:
    """Trick k is led by the expected winner of trick k-1; ``JK/S`` names a suit, ``3C?``
    leads the Ripper declaring no joker call, ``3C!`` declaring one."""
    commands: list[dict[str, Any]] = []
    leader = first_leader
    for number, trick in enumerate(tricks):
        for i, token in enumerate(split(trick)):
            command: dict[str, Any] = {"seat": (leader + i) % players, "type": "play"}
            if "/" in token:
                command["card"], command["suit"] = token.split("/")
            elif token[-1] in "?!":
                command["card"], command["joker_call"] = token[:-1], token[-1] == "!"
            else:
                command["card"] = token
            commands.append(command)
        if number < len(winners):
            leader = winners[number]
    return commands


def hand_file(*, hands: list[str], kitty: str, commands: list[dict[str, Any]],
              expect: dict[str, Any], rules: str = "mighty-5", options: dict[str, Any] | None = None,
              dealer: int = 0, first_bidder: int | None = None, note: str = "") -> dict[str, Any]:
    document: dict[str, Any] = {"format": FORMAT, "rules": rules}
    if options:
        document["options"] = options
    document["dealer"] = dealer
    if first_bidder is not None:
        document["first_bidder"] = first_bidder
    document.update(hands=[split(h) for h in hands], kitty=split(kitty), commands=commands)
    document["note"] = note
    document["expect"] = expect
    return document


def standard(commands: list[dict[str, Any]], expect: dict[str, Any], note: str, **kw: Any) -> dict[str, Any]:
    return hand_file(hands=STANDARD, kitty=STANDARD_KITTY, commands=commands, expect=expect, note=note, **kw)


def contract(points: int, trump: str) -> dict[str, Any]:
    return {"points": points, "trump": trump}


def finished(declarer: int, points: int, trump: str, friend: int | None, side: int,
             made: bool, scores: list[int], winners: list[int]) -> dict[str, Any]:
    return {"exit": 0, "phase": "finished", "winners": winners, "result": {
        "declarer": declarer, "contract": contract(points, trump), "friend": friend,
        "declarer_side_points": side, "made": made, "scores": scores}}


def rejected(index: int, seat: int | None, code: str, phase: str, **more: Any) -> dict[str, Any]:
    return {"exit": 3, "phase": phase, "rejected": {"index": index, "seat": seat, "code": code}, **more}


def three(commands: list[dict[str, Any]], expect: dict[str, Any], note: str) -> dict[str, Any]:
    return hand_file(rules="mighty-3", hands=THREE, kitty=THREE_KITTY, commands=commands,
                     expect=expect, note=note)


def eight(commands: list[dict[str, Any]], expect: dict[str, Any], note: str) -> dict[str, Any]:
    return hand_file(rules="mighty-8", hands=EIGHT, kitty=EIGHT_KITTY, commands=commands,
                     expect=expect, note=note)


def play(seat: int, card: str, **more: Any) -> dict[str, Any]:
    return {"seat": seat, "type": "play", "card": card, **more}


def swap(seat: int, take: str, discard: str) -> dict[str, Any]:
    """mighty-3: a non-declarer's kitty exchange."""
    return {"seat": seat, "type": "exchange", "take": take, "discard": discard}


# ---------------------------------------------------------------- the corpus

AUCTION_13H = auction(0, 5, 0, 13, "H")
PLAY_13H_QH = AUCTION_13H + exchange(0, "4C 2C KD", "QH")  # play starts, seat 0 to lead
# mighty-3, seat 0 bids 10 S (the minimum), keeps JK 3D 2C of the kitty, discards QC KC 2C:
# commands 0-3; 2D and 3C are left for seats 1 then 2
THREE_DISCARDED = auction(0, 3, 0, 10, "S") + [
    {"seat": 0, "type": "discard", "cards": ["QC", "KC", "2C"], "take": ["JK", "3D", "2C"]}]
# mighty-8, seat 0 bids 25 H and discards the kitty: commands 0-8, the call is index 9
EIGHT_DISCARDED = auction(0, 8, 0, 25, "H") + [
    {"seat": 0, "type": "discard", "cards": split(EIGHT_KITTY)}]


def complete_hands() -> dict[str, dict[str, Any]]:
    files: dict[str, dict[str, Any]] = {}
    files["complete-alone"] = standard(
        AUCTION_13H + exchange(0, STANDARD_KITTY, "none") + plays(0, 5, LINE, LINE_WINNERS),
        # 13 H alone (b = 1), 18 points taken: made, +4b / -b
        finished(0, 13, "H", None, 18, True, [4, -1, -1, -1, -1], LINE_WINNERS),
        "A none call: the declarer plays alone and scores 4b. The Joker has no power on the last trick.")
    files["complete-friend-card"] = standard(
        AUCTION_13H + exchange(0, STANDARD_KITTY, "QH") + plays(0, 5, LINE, LINE_WINNERS),
        # seat 1 holds QH: the friend, revealed on the last trick; the side takes 18 + 2
        finished(0, 13, "H", 1, 20, True, [2, 1, -1, -1, -1], LINE_WINNERS)
        | {"events_include": [{"type": "friend_revealed", "seat": 1}]},
        "A card call: the holder of QH is the friend; taking 20 on 13 still scores b = 1.")
    files["complete-failed-alone"] = standard(
        auction(0, 5, 0, 20, "H") + exchange(0, STANDARD_KITTY, "none") + plays(0, 5, LINE, LINE_WINNERS),
        # 20 H (b = 8) alone, 18 taken: failed, -4b / +b
        finished(0, 20, "H", None, 18, False, [-32, 8, 8, 8, 8], LINE_WINNERS),
        "A failed solo contract: -4b for the declarer, +b for each defender.")
    files["complete-failed-with-friend"] = standard(
        auction(0, 5, 0, 20, "H") + exchange(0, STANDARD_KITTY, "JK") + plays(0, 5, LINE, LINE_WINNERS),
        # seat 4 (JK) is the friend and takes nothing: 18 < 20, b = 8: -2b / -b / +b
        finished(0, 20, "H", 4, 18, False, [-16, 8, 8, 8, -8], LINE_WINNERS),
        "The Joker may be called. A failed contract with a friend: -2b, -b, +b each.")
    files["complete-first-trick-declarer-wins"] = standard(
        AUCTION_13H + exchange(0, STANDARD_KITTY, "first_trick") + plays(0, 5, LINE, LINE_WINNERS),
        finished(0, 13, "H", None, 18, True, [4, -1, -1, -1, -1], LINE_WINNERS)
        | {"events_include": [{"type": "declarer_alone"}]},
        "A first-trick call won by the declarer: alone for every purpose, scoring included.")
    files["complete-first-trick-friend"] = standard(
        AUCTION_13H + exchange(0, "4C 2C KD", "first_trick") + plays(0, 5, FIRST_TRICK_LINE, FIRST_TRICK_WINNERS),
        # seat 4 wins the first trick: friend. Side: 14 + 1 (KD discarded) + 1 = 16
        finished(0, 13, "H", 4, 16, True, [2, -1, -1, -1, 1], FIRST_TRICK_WINNERS)
        | {"events_include": [{"type": "friend_revealed", "seat": 4},
                              {"type": "card_played", "seat": 0, "card": "3C", "joker_call": True}]},
        "A first-trick friend; the Ripper calls the Joker out (powerless); a discarded point counts.")
    files["complete-discards-count"] = standard(
        auction(0, 5, 0, 16, "H") + exchange(0, "4C 2C KD", "none") + plays(0, 5, RIPPER_LINE, RIPPER_WINNERS),
        # 15 points in tricks + KD discarded = 16 = C: made exactly; b = 4, alone
        finished(0, 16, "H", None, 16, True, [16, -4, -4, -4, -4], RIPPER_WINNERS),
        "Point cards among the discards count for the declarer's side; P = C is made.")
    files["complete-trump-change-to-nt"] = standard(
        auction(0, 5, 0, 15, "H") + exchange(0, STANDARD_KITTY, "none", trump="NT")
        + plays(0, 5, LINE, LINE_NT_WINNERS),
        # 15 H -> NT raises to 16 (b = 4); in NT the ace of clubs wins the last trick too
        finished(0, 16, "NT", None, 20, True, [16, -4, -4, -4, -4], LINE_NT_WINNERS)
        | {"events_include": [{"type": "trump_changed", "trump": "NT", "points": 16}]},
        "A trump change from a suit to no trump raises the contract by 1.")
    files["complete-20nt-lead-advice"] = standard(
        auction(0, 5, 0, 20, "NT") + exchange(0, STANDARD_KITTY, "QH", lead_suit="D")
        + plays(0, 5, LINE, LINE_NT_WINNERS),
        # 20 NT (b = 8), the side takes all 20: +2b / +b / -b
        finished(0, 20, "NT", 1, 20, True, [16, 8, -8, -8, -8], LINE_NT_WINNERS)
        | {"events_include": [{"type": "friend_called", "lead_suit": "D"}]},
        "With 20 NT the declarer names a suit for the friend to lead: advice, not enforced.")
    files["complete-score-pagat"] = standard(
        AUCTION_13H + exchange(0, STANDARD_KITTY, "QH") + plays(0, 5, LINE, LINE_WINNERS),
        # pagat: S = 2(13 - 13) + (20 - 13) = 7, doubled for the run: 14
        finished(0, 13, "H", 1, 20, True, [28, 14, -14, -14, -14], LINE_WINNERS),
        "score = pagat: overtricks, and a run doubles S.", options={"score": "pagat"})
    files["complete-score-pagat-nt-alone"] = standard(
        auction(0, 5, 0, 15, "H") + exchange(0, STANDARD_KITTY, "none", trump="NT")
        + plays(0, 5, LINE, LINE_NT_WINNERS),
        # pagat: C = 16 after the change: S = 2(16 - 13) + 4 = 10, x2 run x2 NT x2 alone = 80
        finished(0, 16, "NT", None, 20, True, [320, -80, -80, -80, -80], LINE_NT_WINNERS),
        "score = pagat: the run, no trump and playing alone each double S.", options={"score": "pagat"})
    files["complete-score-penalty"] = standard(
        AUCTION_13H + exchange(0, STANDARD_KITTY, "QH") + plays(0, 5, LINE, LINE_WINNERS),
        # penalty, made: each defender -b, nobody gains
        finished(0, 13, "H", 1, 20, True, [0, 0, -1, -1, -1], LINE_WINNERS),
        "score = penalty: the Russian tally; not zero-sum.", options={"score": "penalty"})
    files["complete-kitty-hidden"] = standard(
        AUCTION_13H + exchange(0, STANDARD_KITTY, "none") + plays(0, 5, LINE, LINE_WINNERS),
        finished(0, 13, "H", None, 18, True, [4, -1, -1, -1, -1], LINE_WINNERS)
        | {"events_include": [{"type": "kitty_taken", "seat": 0, "shown": False}]},
        "kitty_shown = false: the kitty is taken face down.", options={"kitty_shown": False})
    files["complete-joker-call-declared"] = standard(
        AUCTION_13H + exchange(0, "4C 2C KD", "none") + plays(0, 5, DECLARED_LINE, DECLARED_WINNERS),
        # the Joker wins trick 2 (QC TC: 2 points); seat 0: 15 + KD = 16; seat 1 takes TS QH
        finished(0, 13, "H", None, 16, True, [4, -1, -1, -1, -1], DECLARED_WINNERS)
        | {"events_include": [{"type": "card_played", "card": "3C", "joker_call": False}]},
        "joker_call = declared: a Ripper lead without the call leaves the Joker its power.",
        options={"joker_call": "declared"})
    files["complete-mighty-4"] = hand_file(
        rules="mighty-4", hands=FOUR, kitty=FOUR_KITTY,
        commands=auction(0, 4, 0, 13, "S") + exchange(0, "AH 3S 2S", "AD") + plays(0, 4, FOUR_LINE, FOUR_WINNERS),
        # 13 S (b = 1); the friend holds AD (the Mighty with spades trump); side 18 + 1 + AH 1
        expect=finished(0, 13, "S", 1, 20, True, [4, 2, -3, -3], FOUR_WINNERS),
        note="mighty-4: +4b / +2b / -3b; a powerless Joker led that nobody could follow wins; "
             "with spades trump the Mighty is AD and may be called.")
    files["complete-mighty-3-short"] = hand_file(
        rules="mighty-3-short", hands=THREE_SHORT, kitty=THREE_SHORT_KITTY,
        commands=auction(0, 3, 0, 13, "S") + exchange(0, THREE_SHORT_KITTY, "none")
        + plays(0, 3, THREE_SHORT_LINE, THREE_SHORT_WINNERS),
        # penalty tally by default; b = 13 - 10 = 3; made: each defender -3
        expect=finished(0, 13, "S", None, 17, True, [0, -3, -3], THREE_SHORT_WINNERS),
        note="mighty-3-short: the declarer alone, the penalty tally, b = C - 10.")
    files["complete-spec-example"] = hand_file(
        hands=SPEC, kitty=SPEC_KITTY, dealer=4, options={"first_bidder": "left_of_dealer"},
        commands=auction(0, 5, 0, 13, "S") + exchange(0, SPEC_KITTY, "AH", trump="NT")
        + plays(0, 5, SPEC_LINE, SPEC_WINNERS),
        # 13 S -> NT is 14 (b = 2); P = 15 >= 14, made with a friend: +2b / +b / -b
        expect=finished(0, 14, "NT", 4, 15, True, [4, -2, -2, -2, 2], SPEC_WINNERS),
        note="hand-file.md's output example, replayed: the same result and the same first trick.")
    files.update(large_hands())
    return files


def large(declarer: int, points: int, trump: str, friends: list[int], side: int, made: bool,
          scores: list[int], winners: list[int]) -> dict[str, Any]:
    """A finished two-pack hand: the result says ``friends``, never ``friend``."""
    return {"exit": 0, "phase": "finished", "winners": winners, "absent": ["friend"], "result": {
        "declarer": declarer, "contract": contract(points, trump), "friends": friends,
        "declarer_side_points": side, "made": made, "scores": scores}}


def large_hands() -> dict[str, dict[str, Any]]:
    """docs/rules/mighty.md §10: three complete mighty-8 hands on the same deal and line of play."""
    files: dict[str, dict[str, Any]] = {}
    line = plays(0, 8, EIGHT_LINE, EIGHT_WINNERS)
    files["complete-mighty-8-two-friends"] = hand_file(
        rules="mighty-8", hands=EIGHT, kitty=EIGHT_KITTY,
        commands=auction(0, 8, 0, 25, "H") + exchange(0, EIGHT_KITTY, "") + line,
        # KH#2 is seat 3's, QD#1 seat 4's: two friends, who take nothing. P = 19 < 25:
        # failed; penalty (the default), b = 1: the declarer and each friend -1
        expect=large(0, 25, "H", [3, 4], 19, False, [-1, 0, 0, -1, -1, 0, 0, 0], EIGHT_WINNERS)
        | {"events_include": [{"type": "friend_revealed", "seat": 4},
                              {"type": "friend_revealed", "seat": 3}]},
        note="mighty-8: two called cards, two friends; both Mighties; the first of two "
             "identical cards wins; the penalty tally charges each friend.")
    files["complete-mighty-8-first-trick-to-declarer"] = hand_file(
        rules="mighty-8", hands=EIGHT, kitty=EIGHT_KITTY, options={"score": "fixed"},
        commands=auction(0, 8, 0, 30, "H") + exchange(0, EIGHT_KITTY, "") + line,
        # AS#2 is seat 1's (revealed in trick 1); the declarer wins trick 1, so first_trick
        # names nobody: one friend, k = 1, d = 6. P = 19 + 21 = 40, made; b = 30 - 24 = 6:
        # declarer (6 - 1) x 6 = 30, the friend 6, each defender -6
        expect=large(0, 30, "H", [1], 40, True, [30, 6, -6, -6, -6, -6, -6, -6], EIGHT_WINNERS)
        | {"events_include": [{"type": "declarer_alone"}]},
        note="mighty-8, fixed: a Mighty copy and first_trick called; the declarer wins trick 1.")
    files["complete-mighty-8-both-calls-one-friend"] = hand_file(
        rules="mighty-8", hands=EIGHT, kitty=EIGHT_KITTY, options={"score": "pagat"},
        commands=auction(0, 8, 0, 30, "H") + exchange(0, EIGHT_KITTY, "") + line,
        # AD#2 and AH#2 are both seat 1's: one friend. P = 40, made: S = 2(30 - 25) + 10 = 20,
        # x2 for the run = 40; k = 1, d = 6: declarer 5 x 40, the friend 40, defenders -40
        expect=large(0, 30, "H", [1], 40, True, [200, 40, -40, -40, -40, -40, -40, -40],
                     EIGHT_WINNERS),
        note="mighty-8, pagat: one player holds both called cards and is one friend; a run.")
    calls = {"complete-mighty-8-two-friends": ["KH#2", "QD#1"],
             "complete-mighty-8-first-trick-to-declarer": ["first_trick", "AS#2"],
             "complete-mighty-8-both-calls-one-friend": ["AH#2", "AD#2"]}
    for name, friend in calls.items():
        next(c for c in files[name]["commands"] if c["type"] == "call_friend")["friend"] = friend
    return files


def stopped_early() -> dict[str, dict[str, Any]]:
    files: dict[str, dict[str, Any]] = {}
    files["stopped-in-bidding"] = standard(
        [pass_(0), bid(1, 14, "D"), pass_(2)],
        {"exit": 0, "phase": "bidding", "to_act": 3, "result": {}},
        "A file may stop anywhere: here seat 3 is to bid.")
    files["stopped-in-exchange"] = standard(
        auction(0, 5, 2, 15, "C"),
        {"exit": 0, "phase": "exchange", "to_act": 2,
         "result": {"declarer": 2, "contract": contract(15, "C")}, "absent": ["friend", "tricks"]},
        "The auction is over: declarer and contract are known; the declarer is to act.")
    files["stopped-in-play"] = standard(
        PLAY_13H_QH + plays(0, 5, ["KS 9S 6S 3S 2H", "JK/D"], [4]),
        {"exit": 0, "phase": "play", "to_act": 0, "winners": [4],
         "result": {"declarer": 0, "contract": contract(13, "H")}, "absent": ["friend", "scores"]},
        "Mid-play: the friend (QH) is not public yet, so the result has no friend.")
    files["stopped-in-play-friend-public"] = standard(
        PLAY_13H_QH + plays(0, 5, ["KS 9S 6S 3S 2H", "3H KH QH 9H 6H"], [4, 0]),
        # trick 2: seat 4 leads 3H, seat 0 KH, seat 1 QH (the called card), 9H, 6H: KH wins
        {"exit": 0, "phase": "play", "to_act": 0, "winners": [4, 0],
         "result": {"declarer": 0, "friend": 1}},
        "Playing the called card reveals the friend: the result names it.")
    files["stopped-mighty-4-short"] = hand_file(
        rules="mighty-4-short", hands=FOUR_SHORT, kitty=FOUR_SHORT_KITTY,
        commands=auction(0, 4, 0, 12, "H") + exchange(0, FOUR_SHORT_KITTY, "AD") + plays(0, 4, ["AS 6S QD JK"], [0]),
        # the Joker is powerless on the first trick; the Mighty leads and wins it
        expect={"exit": 0, "phase": "play", "to_act": 0, "winners": [0],
                "result": {"declarer": 0, "contract": contract(12, "H")}},
        note="mighty-4-short: bids from 12; the Mighty may lead the first trick.")
    files["stopped-mighty-3-in-exchange"] = three(
        THREE_DISCARDED,
        # the declarer kept JK 3D 2C and discarded QC KC 2C; 2D 3C are left; seat 1, on the
        # declarer's left, takes one first
        {"exit": 0, "phase": "exchange", "to_act": 1,
         "result": {"declarer": 0, "contract": contract(10, "S")}, "absent": ["friend", "tricks"],
         "events_include": [{"type": "cards_discarded", "seat": 0, "taken": ["JK", "3D", "2C"]}]},
        "mighty-3: after the declarer's discard, the others exchange, clockwise from its left.")
    return files


def redeals() -> dict[str, dict[str, Any]]:
    files: dict[str, dict[str, Any]] = {}
    all_pass = [pass_(s) for s in range(5)]
    files["redeal-passed-out-twice"] = standard(
        all_pass + all_pass,
        {"exit": 0, "phase": "redeal", "redeal": {"reason": "passed_out", "claimed_by": None},
         "result": {}, "events_include": [{"type": "bidding_reopened", "round": 2},
                                          {"type": "hand_passed_out"}]},
        "Everybody passes twice: the same dealer deals again.")
    files["redeal-second-round-bid"] = standard(
        all_pass + [pass_(0), pass_(1), bid(2, 13, "S"), pass_(3), pass_(4)],
        # round 2: the passes of round 1 do not count; seats 0 1 3 4 pass: seat 2 wins
        {"exit": 0, "phase": "exchange", "to_act": 2, "result": {"declarer": 2, "contract": contract(13, "S")}},
        "After an all-pass round every player may bid again, from the same first bidder.")
    files["redeal-after-redeal-is-wrong-phase"] = standard(
        all_pass + all_pass + [bid(0, 13, "S")],
        rejected(10, 0, "wrong_phase", "redeal"),
        "After a pass-out any later command is wrong_phase.")
    files["redeal-misdeal-claim"] = standard(
        [pass_(0), {"seat": 4, "type": "claim_misdeal"}],
        # seat 4: JK -1, nothing else scores: worth -1 <= 1/2
        {"exit": 0, "phase": "redeal", "redeal": {"reason": "misdeal", "claimed_by": 4}, "result": {}},
        "misdeal_claim = true: a hand worth 1/2 or less may ask for a redeal, out of turn.",
        options={"misdeal_claim": True})
    files["reject-misdeal-worth-too-much"] = standard(
        [{"seat": 2, "type": "claim_misdeal"}],
        # seat 2: TD 1/2 + JC 1 + TC 1/2 = 2 > 1/2
        rejected(0, 2, "misdeal_not_allowed", "bidding"),
        "A hand worth more than 1/2 may not claim a misdeal.", options={"misdeal_claim": True})
    files["reject-misdeal-option-off"] = standard(
        [{"seat": 4, "type": "claim_misdeal"}],
        rejected(0, 4, "misdeal_not_allowed", "bidding"),
        "Misdeal claims are off by default.")
    return files


def options() -> dict[str, dict[str, Any]]:
    files: dict[str, dict[str, Any]] = {}
    files["option-first-bidder-left-of-dealer"] = standard(
        auction(0, 5, 0, 13, "H"),
        {"exit": 0, "phase": "exchange", "to_act": 0, "result": {"declarer": 0}},
        "first_bidder = left_of_dealer: with seat 4 dealing, seat 0 bids first.",
        dealer=4, options={"first_bidder": "left_of_dealer"})
    files["reject-first-bidder-left-of-dealer"] = standard(
        [bid(4, 13, "H")],
        rejected(0, 4, "not_your_turn", "bidding", to_act=0),
        "first_bidder = left_of_dealer: the dealer may not bid first.",
        dealer=4, options={"first_bidder": "left_of_dealer"})
    files["option-first-bidder-previous-declarer"] = standard(
        auction(2, 5, 2, 14, "S"),
        {"exit": 0, "phase": "exchange", "to_act": 2, "result": {"declarer": 2, "contract": contract(14, "S")}},
        "first_bidder = previous_declarer: a later hand's file names its first bidder.",
        dealer=1, first_bidder=2, options={"first_bidder": "previous_declarer"})
    files["option-pass-is-not-final"] = standard(
        [pass_(0), bid(1, 13, "S"), pass_(2), pass_(3), pass_(4), bid(0, 14, "H"),
         pass_(1), pass_(2), pass_(3), pass_(4)],
        # only passes since the standing bid count: after 14 H the four others pass
        {"exit": 0, "phase": "exchange", "to_act": 0, "result": {"declarer": 0, "contract": contract(14, "H")}},
        "pass_is_final = false: a player who passed may bid again.", options={"pass_is_final": False})
    files["reject-pass-is-final"] = standard(
        [pass_(0), bid(1, 13, "S"), bid(0, 14, "H")],
        # seat 0 passed and it is seat 2's turn: already_passed wins over not_your_turn
        rejected(2, 0, "already_passed", "bidding", to_act=2),
        "By default a pass is final; already_passed comes before not_your_turn.")
    files["option-suit-ranks-break-ties"] = standard(
        [bid(0, 15, "D"), bid(1, 15, "H"), pass_(2), pass_(3), pass_(4), pass_(0)],
        {"exit": 0, "phase": "exchange", "to_act": 1, "result": {"declarer": 1, "contract": contract(15, "H")}},
        "suit_ranks_break_ties: at equal points hearts outrank diamonds.",
        options={"suit_ranks_break_ties": True})
    files["reject-equal-points-other-suit"] = standard(
        [bid(0, 15, "D"), bid(1, 15, "H")],
        rejected(1, 1, "bid_too_low", "bidding"),
        "By default the same points in another suit is not higher.")
    files["option-no-trump-outbids-a-suit"] = standard(
        [bid(0, 15, "D"), bid(1, 15, "NT"), pass_(2), pass_(3), pass_(4), pass_(0)],
        {"exit": 0, "phase": "exchange", "to_act": 1, "result": {"declarer": 1, "contract": contract(15, "NT")}},
        "The same points in no trump outbid a suit.")
    files["reject-first-trick-friend-not-allowed"] = standard(
        AUCTION_13H + exchange(0, "4C 2C KD", "first_trick"),
        rejected(6, 0, "bad_friend_call", "exchange", to_act=0),
        "first_trick_friend_allowed = false.", options={"first_trick_friend_allowed": False})
    return files


def rejections() -> dict[str, dict[str, Any]]:
    files: dict[str, dict[str, Any]] = {}
    exchange_13h = AUCTION_13H  # five commands; the discard would be index 5
    files["reject-not-your-turn"] = standard(
        [bid(1, 13, "S")], rejected(0, 1, "not_your_turn", "bidding", to_act=0),
        "The dealer bids first.")
    files["reject-bid-out-of-range"] = standard(
        [bid(0, 21, "NT")], rejected(0, 0, "bid_out_of_range", "bidding"), "Bids are 13 to 20.")
    files["reject-bid-too-low"] = standard(
        [bid(0, 15, "H"), bid(1, 14, "NT")], rejected(1, 1, "bid_too_low", "bidding"),
        "A bid must be higher than the standing bid.")
    files["reject-wrong-phase"] = standard(
        exchange_13h + [bid(1, 14, "H")], rejected(5, 1, "wrong_phase", "exchange"),
        "The auction is over.")
    files["reject-bad-discard"] = standard(
        exchange_13h + [{"seat": 0, "type": "discard", "cards": ["4C", "4C", "2C"]}],
        rejected(5, 0, "bad_discard", "exchange"), "A card discarded twice.")
    files["reject-bad-trump-change"] = standard(
        exchange_13h + [{"seat": 0, "type": "discard", "cards": ["4C", "2C", "KD"]},
                        {"seat": 0, "type": "change_trump", "trump": "H"}],
        rejected(6, 0, "bad_trump_change", "exchange"), "A change to the current trump.")
    files["reject-trump-change-past-20"] = standard(
        auction(0, 5, 0, 19, "H") + [{"seat": 0, "type": "discard", "cards": ["4C", "2C", "KD"]},
                                     {"seat": 0, "type": "change_trump", "trump": "S"}],
        rejected(6, 0, "bad_trump_change", "exchange"), "19 + 2 would pass 20.")
    files["reject-bad-friend-call"] = standard(
        exchange_13h + exchange(0, "4C 2C KD", "AS"),
        rejected(6, 0, "bad_friend_call", "exchange"), "AS is in the declarer's own hand.")
    files["reject-friend-among-discards"] = standard(
        exchange_13h + exchange(0, "4C 2C KD", "KD"),
        rejected(6, 0, "bad_friend_call", "exchange"), "KD was discarded.")
    files["reject-illegal-first-lead"] = standard(
        PLAY_13H_QH + [{"seat": 0, "type": "play", "card": "AH"}],
        rejected(7, 0, "illegal_first_lead", "play", to_act=0), "A trump may not lead the first trick.")
    files["reject-first-lead-ace-of-spades-is-trump"] = standard(
        auction(0, 5, 0, 14, "H") + exchange(0, "4C 2C KD", "QH", trump="S")
        + [{"seat": 0, "type": "play", "card": "AS"}],
        # 14 H -> S is 16: now AD is the Mighty and AS an ordinary trump
        rejected(8, 0, "illegal_first_lead", "play", result={"contract": contract(16, "S")}),
        "Changing trump to spades makes AD the Mighty; AS is then a trump.")
    files["reject-ripper-first-lead"] = standard(
        PLAY_13H_QH + [{"seat": 0, "type": "play", "card": "3C"}],
        rejected(7, 0, "illegal_first_lead", "play"), "The Ripper may not lead the first trick.")
    files["reject-card-not-in-hand"] = standard(
        PLAY_13H_QH + [{"seat": 0, "type": "play", "card": "QH"}],
        rejected(7, 0, "card_not_in_hand", "play"), "Seat 0 does not hold QH.")
    files["reject-must-follow-suit"] = standard(
        PLAY_13H_QH + plays(0, 5, ["KS"], []) + [{"seat": 1, "type": "play", "card": "QD"}],
        rejected(8, 1, "must_follow_suit", "play", to_act=1), "Seat 1 holds spades.")
    files["reject-mighty-as-own-suit"] = hand_file(
        hands=["KS QS JS TS 9S AH KH QH AD AC", "AS JK JH TH KD QD JD KC QC JC",
               "8S 7S 6S 9H 8H 7H TD 9D TC 9C", "5S 4S 3S 6H 5H 4H 8D 7D 6D 8C",
               "2S 3H 2H 5D 4D 3D 2D 7C 6C 5C"], kitty="4C 3C 2C",
        commands=AUCTION_13H + exchange(0, "4C 2C 9S", "none") + plays(0, 5, ["KS"], [])
        + [{"seat": 1, "type": "play", "card": "JH"}],
        # seat 1's only spade is the Mighty: it may play AS or JK, not a third card
        expect=rejected(8, 1, "must_follow_suit", "play"),
        note="The Mighty counts as a card of its own suit for following.")
    files["reject-joker-suit-required"] = standard(
        PLAY_13H_QH + plays(0, 5, ["KS 9S 6S 3S 2H"], [4]) + [{"seat": 4, "type": "play", "card": "JK"}],
        rejected(12, 4, "joker_suit_required", "play", to_act=4), "Leading the Joker names a suit.")
    files["reject-must-play-joker"] = standard(
        PLAY_13H_QH + plays(0, 5, ["AC KC JC 9C 7C", "3C QC TC 8C"], [0])
        + [{"seat": 4, "type": "play", "card": "6C"}],
        rejected(16, 4, "must_play_joker", "play", to_act=4), "The Ripper calls the Joker out.")
    files["reject-malformed-unknown-type"] = standard(
        [{"seat": 0, "type": "shout"}], rejected(0, 0, "malformed_command", "bidding"),
        "An unknown command type is malformed.")
    files["reject-malformed-not-a-card"] = standard(
        PLAY_13H_QH + [{"seat": 0, "type": "play", "card": "10S"}],
        rejected(7, 0, "malformed_command", "play"), "'10S' is not in the notation (TS is).")
    files["reject-malformed-seat-out-of-range"] = standard(
        [{"seat": 5, "type": "pass"}], rejected(0, 5, "malformed_command", "bidding"),
        "There is no seat 5 at five players.")
    files["reject-malformed-missing-field"] = standard(
        [{"seat": 0, "type": "bid", "trump": "H"}], rejected(0, 0, "malformed_command", "bidding"),
        "A bid needs its points.")
    files.update(more_rejections())
    files["reject-after-finished"] = standard(
        AUCTION_13H + exchange(0, STANDARD_KITTY, "none") + plays(0, 5, LINE, LINE_WINNERS)
        + [{"seat": 1, "type": "play", "card": "AS"}],
        rejected(57, 1, "wrong_phase", "finished", result={"scores": [4, -1, -1, -1, -1]}),
        "After the last trick any command is wrong_phase.")
    return files


def more_rejections() -> dict[str, dict[str, Any]]:
    """Each refusal case docs/hand-files.md names, and its order of precedence when several apply."""
    files: dict[str, dict[str, Any]] = {}
    discarded = AUCTION_13H + [{"seat": 0, "type": "discard", "cards": ["4C", "2C", "KD"]}]
    # bad_discard: "Every discard fault (wrong count, a card not held, a card twice)"
    files["reject-discard-wrong-count"] = standard(
        AUCTION_13H + [{"seat": 0, "type": "discard", "cards": ["4C", "2C"]}],
        rejected(5, 0, "bad_discard", "exchange", to_act=0), "A discard of 2 cards, not 3.")
    files["reject-discard-card-not-held"] = standard(
        AUCTION_13H + [{"seat": 0, "type": "discard", "cards": ["4C", "2C", "9S"]}],
        # seat 0 holds its ten cards and the kitty 4C 3C 2C; 9S is seat 1's
        rejected(5, 0, "bad_discard", "exchange", to_act=0), "9S is not the declarer's.")
    # bad_trump_change: "a second trump change"
    files["reject-second-trump-change"] = standard(
        discarded + [{"seat": 0, "type": "change_trump", "trump": "S"},
                     {"seat": 0, "type": "change_trump", "trump": "D"}],
        # 13 H -> S is 15, accepted; a second change is refused whatever it would cost
        rejected(7, 0, "bad_trump_change", "exchange", result={"contract": contract(15, "S")}),
        "Trump may be changed once.")
    # bidding order: malformed_command, wrong_phase, already_passed, not_your_turn,
    # bid_out_of_range, bid_too_low
    files["reject-order-malformed-before-wrong-phase"] = standard(
        AUCTION_13H + [{"seat": 1, "type": "bid", "points": 14, "trump": "X"}],
        rejected(5, 1, "malformed_command", "exchange"),
        "A bid with a trump that is not one, after the auction: malformed_command comes first.")
    files["reject-order-not-your-turn-before-out-of-range"] = standard(
        [bid(1, 21, "H")], rejected(0, 1, "not_your_turn", "bidding", to_act=0),
        "Seat 1 bids 21 before the dealer: not_your_turn comes before bid_out_of_range.")
    files["reject-order-out-of-range-before-too-low"] = standard(
        [bid(0, 15, "H"), bid(1, 12, "NT")], rejected(1, 1, "bid_out_of_range", "bidding", to_act=1),
        "12 is both below 13 and below the standing 15: bid_out_of_range comes first.")
    # playing order: wrong_phase, not_your_turn, card_not_in_hand, joker_suit_required,
    # illegal_first_lead, must_play_joker, must_follow_suit
    files["reject-order-wrong-phase-before-not-your-turn"] = standard(
        AUCTION_13H + [play(3, "3S")], rejected(5, 3, "wrong_phase", "exchange", to_act=0),
        "A play by the wrong seat before the friend call: wrong_phase comes first.")
    files["reject-order-not-your-turn-before-card-not-in-hand"] = standard(
        PLAY_13H_QH + [play(1, "AS")], rejected(7, 1, "not_your_turn", "play", to_act=0),
        "Seat 1 plays a card it does not hold while seat 0 is to lead: not_your_turn.")
    files["reject-order-card-not-in-hand-before-joker-suit"] = standard(
        PLAY_13H_QH + [play(0, "JK")], rejected(7, 0, "card_not_in_hand", "play", to_act=0),
        "Seat 0 leads the Joker (seat 4's) with no suit, to trick 1: card_not_in_hand first.")
    files["reject-order-joker-suit-before-illegal-first-lead"] = standard(
        auction(0, 5, 4, 13, "H") + exchange(4, STANDARD_KITTY, "none") + [play(4, "JK")],
        # seat 4 declares, holds diamonds and clubs besides the Joker: the Joker may not lead
        # trick 1, and leading it names a suit; joker_suit_required comes first
        rejected(7, 4, "joker_suit_required", "play", to_act=4),
        "The Joker led to trick 1 without a suit by a leader holding other cards.")
    files["reject-order-illegal-first-lead-with-suit"] = standard(
        auction(0, 5, 4, 13, "H") + exchange(4, STANDARD_KITTY, "none") + [play(4, "JK", suit="D")],
        rejected(7, 4, "illegal_first_lead", "play", to_act=4),
        "The same lead naming a suit: illegal_first_lead.")
    files["reject-order-must-play-joker-before-must-follow"] = standard(
        PLAY_13H_QH + plays(0, 5, ["AC KC JC 9C 7C", "3C QC TC 8C"], [0]) + [play(4, "3H")],
        # seat 4 holds JK and clubs (6C 5C) and plays a heart to the Ripper lead
        rejected(16, 4, "must_play_joker", "play", to_act=4),
        "Both must_play_joker and must_follow_suit apply: must_play_joker comes first.")
    # mighty-3: the kitty exchange (docs/hand-files.md)
    files["reject-mighty-3-exchange-out-of-turn"] = three(
        THREE_DISCARDED + [swap(2, "3C", "4S")], rejected(4, 2, "not_your_turn", "exchange", to_act=1),
        "mighty-3: seat 1, on the declarer's left, exchanges before seat 2.")
    files["reject-mighty-3-exchange-before-the-discard"] = three(
        auction(0, 3, 0, 10, "S") + [swap(1, "3C", "8S")],
        rejected(3, 1, "not_your_turn", "exchange", to_act=0),
        "mighty-3: nobody exchanges before the declarer has discarded.")
    files["reject-mighty-3-take-not-left"] = three(
        THREE_DISCARDED + [swap(1, "JK", "8S")], rejected(4, 1, "bad_discard", "exchange", to_act=1),
        "mighty-3: the declarer kept JK; only 2D and 3C are left to take.")
    files["reject-mighty-3-exchange-discard-not-held"] = three(
        THREE_DISCARDED + [swap(1, "3C", "4S")], rejected(4, 1, "bad_discard", "exchange", to_act=1),
        "mighty-3: 4S is seat 2's, not seat 1's.")
    files["reject-mighty-3-trump-change-before-exchanges"] = three(
        THREE_DISCARDED + [{"seat": 0, "type": "change_trump", "trump": "H"}],
        rejected(4, 0, "not_your_turn", "exchange", to_act=1),
        "mighty-3: the declarer changes trump only after every exchange.")
    files["reject-mighty-3-call-before-exchanges"] = three(
        THREE_DISCARDED + [swap(1, "3C", "8S"), {"seat": 0, "type": "call_friend", "friend": "none"}],
        rejected(5, 0, "not_your_turn", "exchange", to_act=2),
        "mighty-3: the declarer calls only after every exchange; seat 2 has not exchanged.")
    # friend lists (docs/hand-files.md, "Six to eight players")
    files["reject-friend-list-in-mighty-5"] = standard(
        discarded + [{"seat": 0, "type": "call_friend", "friend": ["QH", "JH"]}],
        rejected(6, 0, "malformed_command", "exchange"),
        "A list of calls in a one-pack variant stays malformed_command.")
    call = {"seat": 0, "type": "call_friend"}
    files["reject-mighty-8-three-calls"] = eight(
        EIGHT_DISCARDED + [dict(call, friend=["KH#2", "QD#1", "QD#2"])],
        rejected(9, 0, "bad_friend_call", "exchange"), "mighty-8: a list of calls has two entries.")
    files["reject-mighty-8-none-in-a-list"] = eight(
        EIGHT_DISCARDED + [dict(call, friend=["KH#2", "none"])],
        rejected(9, 0, "bad_friend_call", "exchange"), "mighty-8: none is not a list entry.")
    files["reject-mighty-8-call-not-in-deck"] = eight(
        EIGHT_DISCARDED + [dict(call, friend="2D#2")],
        rejected(9, 0, "bad_friend_call", "exchange"), "mighty-8 has no 2D#2.")
    files["reject-mighty-8-plain-name"] = eight(
        EIGHT_DISCARDED + [dict(call, friend="none"), play(0, "AS")],
        rejected(10, 0, "malformed_command", "play", to_act=0),
        "mighty-8: AS is not a card name there (AS#1 is).")
    files["reject-mighty-8-play-not-in-deck"] = eight(
        EIGHT_DISCARDED + [dict(call, friend="none"), play(0, "2D#2")],
        rejected(10, 0, "card_not_in_hand", "play", to_act=0), "mighty-8 has no 2D#2.")
    return files


def broken() -> dict[str, tuple[str | dict[str, Any], dict[str, Any]]]:
    """Files that are not hand files: exit 2, a message naming the problem, no output."""
    def bad(error: str, **changes: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        document = {"format": FORMAT, "rules": "mighty-5", "dealer": 0,
                    "hands": [split(h) for h in STANDARD], "kitty": split(STANDARD_KITTY),
                    "commands": AUCTION_13H}
        document.update(changes)
        return document, {"exit": 2, "error": error}

    hands = [split(h) for h in STANDARD]
    files: dict[str, tuple[str | dict[str, Any], dict[str, Any]]] = {
        "broken-not-json": ('{"format": "mighty-hand/1", "rules": "mighty-5", "dealer": 0,\n',
                            {"exit": 2, "error": "not valid JSON"}),
        "broken-unknown-card": bad("'ZZ' is not a card", hands=[["ZZ", *hands[0][1:]], *hands[1:]],
                                   kitty=split(STANDARD_KITTY)),
        "broken-card-twice": bad("AS is dealt twice", hands=[["AS", *hands[0][1:]], *hands[1:3],
                                                             ["AS", *hands[3][1:]], hands[4]]),
        "broken-hand-size": bad("Seat 0 was dealt 9 cards", hands=[hands[0][:9], *hands[1:]],
                                kitty=[hands[0][9], *split(STANDARD_KITTY)]),
        "broken-hand-count": bad("deals 5 hands", hands=hands[:4]),
        "broken-kitty-size": bad("The kitty has 2 cards", kitty=split(STANDARD_KITTY)[:2]),
        "broken-unknown-variant": bad("Unknown variant 'mighty-9'", rules="mighty-9"),
        "broken-unknown-option": bad("Unknown rule option 'giruda'", options={"giruda": "S"}),
        "broken-bad-option-value": bad("Option 'score' cannot be 'double'", options={"score": "double"}),
        "broken-wrong-format": bad("Unknown format 'mighty-hand/2'", format="mighty-hand/2"),
        "broken-card-not-in-deck": bad("2H is not in the mighty-4 deck", rules="mighty-4",
                                       hands=[split(h) for h in FOUR[:1]] + [split(h) for h in FOUR[1:3]]
                                       + [["2H", *split(FOUR[3])[1:]]], kitty=split(FOUR_KITTY)),
        "broken-dealer-not-a-seat": bad("Dealer 5 is not a seat", dealer=5),
        "broken-first-bidder-not-a-seat": bad("First bidder 7 is not a seat", first_bidder=7),
        "broken-not-an-object": ("[1, 2, 3]\n", {"exit": 2, "error": "not well formed"}),
        "broken-field-of-wrong-type": bad("not well formed", dealer="north"),
        "broken-mighty-8-plain-name": bad(
            "AS is not in the mighty-8 deck", rules="mighty-8",
            hands=[["AS", *split(EIGHT[0])[1:]], *[split(h) for h in EIGHT[1:]]],
            kitty=split(EIGHT_KITTY), commands=[]),
    }
    return files


def dumps(document: dict[str, Any]) -> str:
    """JSON laid out for reading: one line per seat's hand and per command."""
    def one(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    lines = []
    for key, value in document.items():
        if key in ("hands", "commands") and value:
            inner = ",\n".join(f"  {one(item)}" for item in value)
            lines.append(f" {one(key)}: [\n{inner}\n ]")
        else:
            lines.append(f" {one(key)}: {one(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def write() -> list[Path]:
    written: list[Path] = []  # overwrites its own files; hand files added by hand stay
    for group in (complete_hands, stopped_early, redeals, options, rejections):
        for name, document in group().items():
            path = HERE / f"{name}.json"
            path.write_text(dumps(document))
            written.append(path)
    for name, (content, expect) in broken().items():
        path = HERE / f"{name}.json"
        path.write_text(content if isinstance(content, str) else dumps(content))
        (HERE / f"{name}.expect.json").write_text(dumps(expect))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write():
        print(path.name)

"""Write the Mitigati hand-file corpus (run: ``python tests/hands/mitigati/make_corpus.py``).

Each file is a hand file (docs/hand-files.md, "Mitigati files", ``"rules": "mitigati"``) with its
expected outcome under ``"expect"``; the file that must not be JSON gets a sibling
``NAME.expect.json``. Every expectation below was worked out by hand from the spec — the
comments give the reckoning — never copied from the engine. A trick's leader is the
previous trick's expected winner, so a wrong expectation shows up as a refused command.

Expectation keys: ``exit``; ``phase``; ``to_act``; ``session``; ``result`` (keys that
must match); ``absent`` (result keys that must not be there); ``winners``;
``rejected`` (``index``, ``seat``, ``code``); ``error`` (words of the exit-2 message).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FORMAT = "mighty-hand/1"
TRUMPS = [f"T{n}" for n in range(1, 22)]

# ---------------------------------------------------------------- deals (dealer 0: R = 2, L = 1)
# A: R holds every sword and batons 1-F; L the top batons, every coin, cups 1-7 and the
# Fool; the dealer cups 8-K and all 21 trumps. The dealer trumps whatever R leads.
A = [
    "8C 9C TC FC NC QC KC " + " ".join(TRUMPS),
    "NB QB KB 1D 2D 3D 4D 5D 6D 7D 8D 9D TD FD ND QD KD 1C 2C 3C 4C 5C 6C 7C FOOL",
    "1S 2S 3S 4S 5S 6S 7S 8S 9S TS FS NS QS KS 1B 2B 3B 4B 5B 6B 7B 8B 9B TB FB",
]
# C: as A, but the dealer holds the Fool and L holds the Angel (T20).
C = [
    "8C 9C TC FC NC QC KC " + " ".join(t for t in TRUMPS if t != "T20") + " FOOL",
    "NB QB KB 1D 2D 3D 4D 5D 6D 7D 8D 9D TD FD ND QD KD 1C 2C 3C 4C 5C 6C 7C T20",
    A[2],
]


def packets(hands: list[str], dealer: int = 0) -> list[list[list[str]]]:
    """Each seat's cards in the order written: 5 a round, the dealer's last packet 8."""
    cards = [h.split() for h in hands]
    rows: list[list[list[str]]] = []
    for r in range(5):
        rows.append([cards[s][5 * r:5 * r + (8 if r == 4 and s == dealer else 5)] for s in range(3)])
    return rows


def hand_file(deal: list[str], commands: list[Any], expect: dict[str, Any], dealer: int = 0,
              **extra: Any) -> dict[str, Any]:
    return {"format": FORMAT, "rules": "mitigati", "dealer": dealer, "packets": packets(deal, dealer),
            "commands": commands, "expect": expect, **extra}


def b(seat: int, action: str, amount: Any = None) -> dict[str, Any]:
    command: dict[str, Any] = {"seat": seat, "type": "bargain", "action": action}
    if amount is not None:
        command["amount"] = amount
    return command


def passes(dealer: int = 0, sessions: int = 3) -> list[dict[str, Any]]:
    """Every session passed out: R, L, dealer, three times."""
    r, left = (dealer + 2) % 3, (dealer + 1) % 3
    return [b(s, "pass") for _ in range(sessions) for s in (r, left, dealer)]


def p(seat: int, card: str) -> dict[str, Any]:
    return {"seat": seat, "type": "play", "card": card}


def d(seat: int, *names: str) -> dict[str, Any]:
    return {"seat": seat, "type": "declare", "combinations": list(names)}


def discard(cards: str) -> dict[str, Any]:
    return {"seat": 0, "type": "discard", "cards": cards.split()}


def trick(leader: int, *cards: str) -> list[dict[str, Any]]:
    """A trick in play order from its leader: X, right(X), right(right(X))."""
    return [p((leader + 2 * k) % 3, card) for k, card in enumerate(cards)]


# A up to the first lead: passes, the dealer discards 8C 9C TC, R and L declare nothing;
# the dealer (21 trumps) declares tarocchi: 10 + 11 = 21, shown T1..T21. Its honours are
# KC, T20, T1 (no Fool): h = 3, nothing. L: KB KD FOOL, h = 3; R: KS: nothing.
A_OPEN = [*passes(), discard("8C 9C TC"), d(2), d(1), d(0, "tarocchi")]
A_TAROCCHI = {"seat": 0, "name": "tarocchi", "value": 21, "shown": TRUMPS}


def cards(text: str) -> list[str]:
    return text.split()


def a_tricks() -> list[dict[str, Any]]:
    """Trick 0: R leads KS; L, void in swords and trumps, plays KD; the dealer, void in
    swords, must trump: T1. The dealer wins and leads the rest: FC NC QC KC (L must follow
    with 1C-4C, R plays 1S-4S; a court card beats every pip), then T2..T21 while R sheds
    5S..QS and its batons and L the rest; L plays the Fool to trick 5 (T2 led)."""
    plays = trick(2, "KS", "KD", "T1")
    r_cards = cards("1S 2S 3S 4S 5S 6S 7S 8S 9S TS FS NS QS 1B 2B 3B 4B 5B 6B 7B 8B 9B TB FB")
    l_cards = cards("1C 2C 3C 4C FOOL NB QB KB 1D 2D 3D 4D 5D 6D 7D 8D 9D TD FD ND QD 5C 6C 7C")
    leads = ["FC", "NC", "QC", "KC", *TRUMPS[1:]]
    for k, lead in enumerate(leads):
        plays += trick(0, lead, r_cards[k], l_cards[k])
    return plays


def complete_hands() -> dict[str, dict[str, Any]]:
    return {
        # The dealer wins all 25 tricks. L played the Fool to trick 5, had won nothing, owed
        # the card, never won a trick: after the 25th the Fool itself goes to the dealer.
        # points: the dealer every card (75 won + 3 discarded) = 129; L 0; R 0.
        # scores: 129 - 43 + 2 x 21 = 128; L and R: 0 - 43 - 21 = -64 each. Sum 0.
        "complete-fool-itself": hand_file(A, [*A_OPEN, *a_tricks()], {
            "exit": 0, "phase": "finished", "winners": [0] * 25,
            "result": {"dealer": 0, "bargain": None, "discards": ["8C", "9C", "TC"],
                       "declarations": [A_TAROCCHI],
                       "fool": {"seat": 1, "trick": 5, "to": 0, "card": "FOOL", "paid_in": None},
                       "points": [129, 0, 0], "scores": [128, -64, -64]},
            "result_keys": ["dealer", "bargain", "discards", "declarations", "tricks", "fool",
                            "points", "scores"],
            "first_trick": {"leader": 2, "cards": ["KS", "KD", "T1"], "winner": 0}}),
    }


# ------------------------------------------------ the spec's finished example (§2 in, §9 out)
# docs/hand-files.md, "Mitigati files" fixes dealer 0 (R = 2, L = 1), the packets of rounds 1 and 5,
# the bargaining, the discard TC 2S 1S, R's `honours` and the first lead KD; §9 shows
# trick 0 (KD 5D 1D, R wins), the Fool (R's, trick 9, to the dealer, 5D, paid at once),
# points [59, 0, 70] (L wins no trick) and scores [6, -53, 47]. Rounds 2-4 are ours.
#
# Every coin is placed by §2 already: the dealer 1D-4D 9D, L 5D-8D, R KD QD ND FD TD.
# L must lose all 25 tricks, so it gets the lowest cards: batons 1-6, cups 4-8 (below
# every cup of the others but 9C), swords 3-7 and trumps T4-T8, which R's opening trump
# leads draw (T1-T3 go to the dealer to play under them). R's honours: KD KB (round 1),
# the Fool (it plays it) and T20: h = 4, neither kings nor mitigati (no T1), so
# `honours` 10 is its best and only set; 8 trumps + the Fool is no tarocchi. The dealer
# keeps KC KS T1 (h = 3) and 8 trumps after the discard, L 5 trumps and no honour:
# neither can declare anything, so their empty declarations are the only ones possible.
#
# Each seat's 25 cards (the dealer's 28) in packet order: rounds 1 and 5 as §2 writes
# them, rounds 2-4 between.
SPEC = [
    "1D 2D 3D 4D TB  9B 8B 7B KC NC  FC KS QS NS FS  T1 T2 T3 T16 T21  T19 T18 T17 9D 9C TC 2S 1S",
    "5D 6D 7D 8D 6B  3B 4B 5B 4C 5C  6C 7C 8C 3S 4S  5S 6S 7S T4 T5  T6 T7 T8 1B 2B",
    "KD QD ND FD KB  QB NB FB QC 1C  3C TS 9S 8S T9  T10 T14 T15 T20 FOOL  T13 T12 T11 TD 2C",
]
# §2's bargaining: session 1, R pays 3, L asks 10, the dealer passes, R says continue (the
# offer and the ask lapse); session 2, R says continue; session 3, three passes.
SPEC_OPEN = [b(2, "pay", 3), b(1, "sell", 10), b(0, "pass"), b(2, "continue"), b(2, "continue"),
             *passes(sessions=1), discard("TC 2S 1S"), d(2, "honours"), d(1), d(0)]
# The 25 tricks, each from its leader (the previous winner), with the card points won:
#  0 R   KD 5D 1D      R  5+1+1 = 7    §9's trick 0
#  1 R   T20 T4 T1     R  5+1+5 = 11   the Angel wins; the dealer sheds the Bagatto
#  2 R   T9 T5 T2      R  3
#  3 R   T10 T6 T3     R  3
#  4 R   T11 T7 T16    dealer 3        the dealer overtrumps and takes the lead
#  5 D   T17 T12 T8    dealer 3        L's last trump
#  6 D   T18 T13 5B    dealer 3        L, void in trumps, sheds
#  7 D   T19 T14 6B    dealer 3
#  8 D   T21 T15 8C    dealer 3        (T21 is below T20 only, which R has played)
#  9 D   KS FOOL 3S    dealer 5+1 = 6  R plays the Fool; its first 1-point card won is 5D
#                                      (trick 0: KD 5 points, then 5D): given at once
# 10 D   QS 8S 4S      dealer 6
# 11 D   NS 9S 5S      dealer 5
# 12 D   FS TS 6S      dealer 4
# 13 D   KC 1C 4C      dealer 7
# 14 D   NC 2C 5C      dealer 5
# 15 D   FC 3C 6C      dealer 4
# 16 D   9C QC 7C      R  6            the dealer's 9C is below every cup: R takes the lead
# 17 R   KB 1B TB      R  7
# 18 R   QB 2B 9B      R  6
# 19 R   NB 3B 8B      R  5
# 20 R   FB 4B 7B      R  4
# 21 R   QD 6D 2D      R  6
# 22 R   ND 7D 3D      R  5
# 23 R   FD 8D 4D      R  4
# 24 R   TD 7S 9D      dealer 3        9D above TD (pips reversed); L, void, sheds 7S
# Won: R 7+11+3+3 + 6+7+6+5+4+6+5+4 = 67; the dealer 5 x 3 + 6+6+5+4 + 7+5+4 + 3 = 55;
# L nothing. 67 + 55 + the Fool's 4 = 126 = 129 - the 3 discarded (TC 2S 1S, 1 each).
# points: the dealer 55 + 3 discarded + 5D given = 59; L 0; R 67 - 5D + the Fool 4 = 70.
# scores (§8): R declared honours 10: the dealer 59 - 43 - 10 = 6; L 0 - 43 - 10 = -53;
# R 70 - 43 + 2 x 10 = 47. Sum 0: exactly §9's [59, 0, 70] and [6, -53, 47].
SPEC_TRICKS = [
    (2, "KD 5D 1D"), (2, "T20 T4 T1"), (2, "T9 T5 T2"), (2, "T10 T6 T3"), (2, "T11 T7 T16"),
    (0, "T17 T12 T8"), (0, "T18 T13 5B"), (0, "T19 T14 6B"), (0, "T21 T15 8C"), (0, "KS FOOL 3S"),
    (0, "QS 8S 4S"), (0, "NS 9S 5S"), (0, "FS TS 6S"), (0, "KC 1C 4C"), (0, "NC 2C 5C"),
    (0, "FC 3C 6C"), (0, "9C QC 7C"), (2, "KB 1B TB"), (2, "QB 2B 9B"), (2, "NB 3B 8B"),
    (2, "FB 4B 7B"), (2, "QD 6D 2D"), (2, "ND 7D 3D"), (2, "FD 8D 4D"), (2, "TD 7S 9D"),
]
SPEC_WINNERS = [2, 2, 2, 2, *[0] * 12, *[2] * 8, 0]


def spec_example() -> dict[str, dict[str, Any]]:
    plays = [c for leader, played in SPEC_TRICKS for c in trick(leader, *played.split())]
    hands = [h.split() for h in SPEC]  # §2 shows `hands` too: each seat's deal, in packet order
    return {
        "complete-spec-example": hand_file(SPEC, [*SPEC_OPEN, *plays], {
            "exit": 0, "phase": "finished", "winners": SPEC_WINNERS,
            "result": {"dealer": 0, "bargain": None, "discards": ["TC", "2S", "1S"],
                       "declarations": [{"seat": 2, "name": "honours", "value": 10}],
                       "fool": {"seat": 2, "trick": 9, "to": 0, "card": "5D", "paid_in": 9},
                       "points": [59, 0, 70], "scores": [6, -53, 47]},
            "result_keys": ["dealer", "bargain", "discards", "declarations", "tricks", "fool",
                            "points", "scores"],
            "first_trick": {"leader": 2, "cards": ["KD", "5D", "1D"], "winner": 2}}, hands=hands),
    }


def stopped_early() -> dict[str, dict[str, Any]]:
    c_open = [*passes(), discard("8C 9C TC"), d(2), d(1), d(0)]
    return {
        # The seed's own session 1: R pays 3, L asks 10, the dealer passes, R says continue
        # (offer and ask lapse); session 2 ends with R's continue. Session 3: R to speak.
        "stopped-bargaining-session-3": hand_file(A, [
            b(2, "pay", 3), b(1, "sell", 10), b(0, "pass"), b(2, "continue"), b(2, "continue")], {
            "exit": 0, "phase": "bargaining", "session": 3, "to_act": 2,
            "result": {"dealer": 0, "bargain": None, "tricks": []},
            "absent": ["discards", "declarations", "fool", "points", "scores"]}),
        # R asks 6, L offers 6: they agree; the third player, the dealer, answers at once.
        "stopped-agreement-awaits-the-third": hand_file(A, [b(2, "sell", 6), b(1, "pay", 6)], {
            "exit": 0, "phase": "bargaining", "session": 1, "to_act": 0,
            "result": {"bargain": None, "tricks": []}}),
        # The third player's continue refuses the agreement: session 2 starts with R.
        # The amount of a pass is not used, so its odd type is ignored (§3).
        "stopped-agreement-refused": hand_file(A, [
            b(2, "sell", 6), b(1, "pay", 6), b(0, "continue"), b(2, "pass", "ignored")], {
            "exit": 0, "phase": "bargaining", "session": 2, "to_act": 1}),
        # Three passes in a row after an offer: the unmatched offer lapses, session 2.
        "stopped-passes-after-an-offer": hand_file(A, [b(2, "pay", 2), b(1, "pass"), b(0, "pass"), b(2, "pass")], {
            "exit": 0, "phase": "bargaining", "session": 2, "to_act": 2}),
        "stopped-discard": hand_file(A, passes(), {
            "exit": 0, "phase": "discard", "to_act": 0,
            "result": {"dealer": 0, "bargain": None, "tricks": []}, "absent": ["discards", "declarations"]}),
        # Trumps may be discarded (not T20, T1): tarocchi on the 18 left is 18.
        "stopped-declaring": hand_file(A, [*passes(), discard("T2 T3 T4"), d(2)], {
            "exit": 0, "phase": "declaring", "to_act": 1,
            "result": {"discards": ["T2", "T3", "T4"], "declarations": [], "tricks": []},
            "absent": ["fool"]}),
        "stopped-first-lead": hand_file(A, [*passes(), discard("T2 T3 T4"), d(2), d(1), d(0, "tarocchi")], {
            "exit": 0, "phase": "play", "to_act": 2,
            "result": {"declarations": [{"seat": 0, "name": "tarocchi", "value": 18,
                                         "shown": ["T1", *TRUMPS[4:]]}],
                       "tricks": [], "fool": None}}),
        # A's first six tricks: L plays the Fool to trick 5 with nothing won: it owes.
        "stopped-fool-owed": hand_file(A, [*A_OPEN, *a_tricks()[:18]], {
            "exit": 0, "phase": "play", "to_act": 0, "winners": [0] * 6,
            "result": {"fool": {"seat": 1, "trick": 5, "to": 0, "card": None, "paid_in": None}},
            "absent": ["points", "scores"]}),
        # C. Trick 0: R leads KS; L, void in swords, must trump: T20; the dealer undertrumps
        # T1; the Angel wins: L. Trick 1: L leads 1D, the dealer plays the Fool, R (void,
        # no trumps) 1S: the only coin wins, L. The dealer has won nothing: it owes.
        # Trick 2: L leads 2D; the dealer, void in coins, trumps T2; R 2S: the dealer wins
        # 2D T2 2S, and pays its debt with the earliest 1-point card, 2D, at trick 2's close.
        "stopped-fool-paid-later": hand_file(C, [
            *c_open, *trick(2, "KS", "T20", "T1"), *trick(1, "1D", "FOOL", "1S"),
            *trick(1, "2D", "T2", "2S")], {
            "exit": 0, "phase": "play", "to_act": 0, "winners": [1, 1, 0],
            "result": {"declarations": [],
                       "fool": {"seat": 0, "trick": 1, "to": 1, "card": "2D", "paid_in": 2}}}),
        # C. Trick 0 as above (L). Trick 1: L leads 1D, the dealer trumps T2, R 1S: the
        # dealer wins 1D T2 1S. Trick 2: the dealer leads the Fool; R's 2S sets the suit;
        # L, void in swords and trumps, plays 2D: R wins. The dealer gives R its earliest
        # 1-point card, 1D, at once (paid_in 2).
        "stopped-fool-led-paid-at-once": hand_file(C, [
            *c_open, *trick(2, "KS", "T20", "T1"), *trick(1, "1D", "T2", "1S"),
            *trick(0, "FOOL", "2S", "2D")], {
            "exit": 0, "phase": "play", "to_act": 2, "winners": [1, 0, 2],
            "result": {"fool": {"seat": 0, "trick": 2, "to": 2, "card": "1D", "paid_in": 2}}}),
    }


def abandoned() -> dict[str, dict[str, Any]]:
    return {
        # §9's example: dealer 2 (R = 1, L = 0), who is dealt A's 28-card hand. Sessions 1 and 2 pass out; in session 3
        # R offers 8, L asks 8, and the dealer (the third) passes: abandoned. The payer (1)
        # pays the seller (0) 8; the third player gets nothing: [8, -8, 0].
        "abandoned-spec-example": hand_file([A[1], A[2], A[0]], [
            *passes(dealer=2, sessions=2), b(1, "pay", 8), b(0, "sell", 8), b(2, "pass")], {
            "exit": 0, "phase": "abandoned",
            "result": {"dealer": 2, "bargain": {"session": 3, "payer": 1, "seller": 0, "amount": 8},
                       "tricks": [], "scores": [8, -8, 0]},
            "result_keys": ["dealer", "bargain", "tricks", "scores"]}, dealer=2),
        # Session 1, dealer 0: R pays 2, L asks 12, the dealer passes, R raises to 5, L
        # lowers to 5: agreement; the dealer passes: R pays L 5.
        "abandoned-session-1": hand_file(A, [
            b(2, "pay", 2), b(1, "sell", 12), b(0, "pass"), b(2, "pay", 5), b(1, "sell", 5),
            b(0, "pass")], {
            "exit": 0, "phase": "abandoned",
            "result": {"bargain": {"session": 1, "payer": 2, "seller": 1, "amount": 5},
                       "scores": [0, 5, -5]}}),
    }


def rejections() -> dict[str, dict[str, Any]]:
    def reject(deal: list[str], commands: list[Any], index: int, seat: int | None, code: str,
               phase: str, **more: Any) -> dict[str, Any]:
        return hand_file(deal, commands, {"exit": 3, "phase": phase,
                                          "rejected": {"index": index, "seat": seat, "code": code}, **more})

    opened = [*A_OPEN]
    n = len(opened)
    return {
        "reject-not-your-turn": reject(A, [b(0, "pass")], 0, 0, "not_your_turn", "bargaining"),
        "reject-wrong-phase-play-while-bargaining": reject(A, [p(1, "KD")], 0, 1, "wrong_phase", "bargaining"),
        "reject-wrong-phase-after-abandoned": reject(A, [
            b(2, "sell", 6), b(1, "pay", 6), b(0, "pass"), b(2, "pass")], 3, 2, "wrong_phase", "abandoned"),
        "reject-wrong-phase-discard-while-declaring": reject(A, [*passes(), discard("8C 9C TC"), discard("FC NC QC")],
                                                             10, 0, "wrong_phase", "declaring"),
        # R's offer of 3 stands: after L's ask and the dealer's pass, R "raises" to 2.
        "reject-bad-bargain-payer-lowers": reject(A, [b(2, "pay", 3), b(1, "sell", 10), b(0, "pass"), b(2, "pay", 2)],
                                                  3, 2, "bad_bargain", "bargaining"),
        "reject-bad-bargain-offer-above-ask": reject(A, [b(2, "sell", 4), b(1, "pay", 5)], 1, 1, "bad_bargain", "bargaining"),
        "reject-bad-bargain-second-payer": reject(A, [b(2, "pay", 4), b(1, "pay", 5)], 1, 1, "bad_bargain", "bargaining"),
        "reject-bad-bargain-zero": reject(A, [b(2, "sell", 0)], 0, 2, "bad_bargain", "bargaining"),
        "reject-bad-bargain-third-sells-on-agreement": reject(A, [b(2, "sell", 6), b(1, "pay", 6), b(0, "sell", 5)],
                                                              2, 0, "bad_bargain", "bargaining", to_act=0),
        "reject-bad-discard-honour": reject(A, [*passes(), discard("8C 9C KC")], 9, 0, "bad_discard", "discard"),
        "reject-bad-discard-count": reject(A, [*passes(), discard("8C 9C TC FC")], 9, 0, "bad_discard", "discard"),
        "reject-bad-discard-not-held": reject(A, [*passes(), discard("8C 9C KS")], 9, 0, "bad_discard", "discard"),
        "reject-bad-declaration-tarocchi-not-held": reject(A, [*passes(), discard("8C 9C TC"), d(2, "tarocchi")],
                                                           10, 2, "bad_declaration", "declaring"),
        # the dealer holds KC T20 T1: three honours, so no honour part at all
        "reject-bad-declaration-honours-not-held": reject(A, [*passes(), discard("8C 9C TC"), d(2), d(1),
                                                              d(0, "tarocchi", "honours")],
                                                          12, 0, "bad_declaration", "declaring"),
        "reject-bad-declaration-twice": reject(A, [*passes(), discard("8C 9C TC"), d(2), d(1),
                                                   d(0, "tarocchi", "tarocchi")], 12, 0, "bad_declaration", "declaring"),
        "reject-card-not-in-hand": reject(A, [*opened, p(2, "T1")], n, 2, "card_not_in_hand", "play"),
        # trick 0: R leads KS, L sheds KD; the dealer, void in swords, holds trumps: FC is refused
        "reject-must-trump": reject(A, [*opened, p(2, "KS"), p(1, "KD"), p(0, "FC")], n + 2, 0, "must_trump", "play"),
        # trick 1: the dealer leads FC, R sheds 1S, L holds cups and plays a coin
        "reject-must-follow-suit": reject(A, [*opened, *trick(2, "KS", "KD", "T1"), p(0, "FC"), p(2, "1S"), p(1, "1D")],
                                          n + 5, 1, "must_follow_suit", "play"),
        "reject-malformed-mighty-type": reject(A, [{"seat": 2, "type": "bid", "points": 13, "trump": "S"}],
                                               0, 2, "malformed_command", "bargaining"),
        "reject-malformed-seat": reject(A, [b(3, "pass")], 0, 3, "malformed_command", "bargaining"),
        "reject-malformed-action": reject(A, [b(2, "raise", 3)], 0, 2, "malformed_command", "bargaining"),
        "reject-malformed-amount-missing": reject(A, [b(2, "pay")], 0, 2, "malformed_command", "bargaining"),
        "reject-malformed-amount-boolean": reject(A, [b(2, "sell", True)], 0, 2, "malformed_command", "bargaining"),
        # malformed comes before wrong_phase: a play of a non-card while bargaining
        "reject-malformed-card": reject(A, [p(2, "XX")], 0, 2, "malformed_command", "bargaining"),
        "reject-malformed-cards-not-a-list": reject(A, [*passes(), {"seat": 0, "type": "discard", "cards": "8C 9C TC"}],
                                                    9, 0, "malformed_command", "discard"),
        "reject-malformed-combination": reject(A, [*passes(), discard("8C 9C TC"), d(2, "tarot")],
                                               10, 2, "malformed_command", "declaring"),
    }


def broken() -> dict[str, dict[str, Any]]:
    good = hand_file(A, [], {})
    del good["expect"]

    def brk(error: str, **changes: Any) -> dict[str, Any]:
        document = {**good, **changes}
        return {**{k: v for k, v in document.items() if v is not None}, "expect": {"exit": 2, "error": error}}

    rows = packets(A)
    swapped = [row[:] for row in rows]
    swapped[0] = [swapped[0][0][:4] + ["KS"], swapped[0][1], swapped[0][2]]  # KS twice, 1D never
    short = [row[:] for row in rows]
    short[4] = [rows[4][0][:5], rows[4][1], rows[4][2]]
    hands = [[c for row in rows for c in row[s]] for s in range(3)]
    wrong_hands = [hands[0], hands[2], hands[1]]
    return {
        "broken-format": brk("format", format="mighty-hand/2"),
        "broken-unknown-rules": brk("Unknown rules 'mitigatti'", rules="mitigatti"),
        "broken-option": brk("no options", options={"fool_points": 5}),
        "broken-dealer": brk("Dealer 3", dealer=3),
        "broken-packets-shape": brk("packets[4][0]", packets=short),
        "broken-packets-not-the-deck": brk("KS is dealt twice", packets=swapped),
        "broken-hands-mismatch": brk("hands[1]", hands=wrong_hands),
        "broken-commands-not-a-list": brk("commands", commands={"seat": 2}),
    }


def ok_with_hands() -> dict[str, dict[str, Any]]:
    rows = packets(A)
    hands = [[c for row in rows for c in row[s]][::-1] for s in range(3)]  # any order
    return {"stopped-with-hands-and-a-kitty": hand_file(A, [b(2, "pass")], {
        "exit": 0, "phase": "bargaining", "session": 1, "to_act": 1}, hands=hands, kitty=["ignored"])}


def all_files() -> dict[str, dict[str, Any]]:
    return {**complete_hands(), **spec_example(), **stopped_early(), **abandoned(), **rejections(), **broken(),
            **ok_with_hands()}


NOT_JSON = ("broken-not-json", '{"format": "mighty-hand/1", "rules": "mitigati", ',
            {"exit": 2, "error": "not valid JSON"})


def main() -> None:
    for name, document in all_files().items():
        (HERE / f"{name}.json").write_text(json.dumps(document, indent=1) + "\n")
    name, text, expect = NOT_JSON
    (HERE / f"{name}.json").write_text(text)
    (HERE / f"{name}.expect.json").write_text(json.dumps(expect) + "\n")


if __name__ == "__main__":
    main()

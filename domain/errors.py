"""Refusals: a small exception tree with stable codes (docs/hand-files.md).

A refused command raises; it never returns an empty list or a ``False``. Each error
carries a code clients can react to and a sentence a person understands.
"""

from __future__ import annotations


class MightyError(Exception):
    """Base of every refusal the domain makes."""

    code: str = "error"  # each subclass's stable code; the two below carry theirs per refusal

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class InternalError(MightyError):
    """Not a refusal but a fault: the rules raised something that is not a ``MightyError``,
    or made an event that does not decode. Nothing was written; the fault is logged with
    its table, command and traceback, and the process goes on."""

    code = "internal_error"


class RuleSetError(MightyError):
    """An unknown variant or option, or a bad option value."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class HandFileError(MightyError):
    """A broken hand file: not JSON, wrong format, a bad deal (exit 2)."""

    code = "bad_hand_file"


class UnknownEventVersion(MightyError):
    """A stored event of a schema version this release cannot read (domain/upcasting.py)."""

    code = "unknown_event_version"


class RuleError(MightyError):
    """A command the rules refuse. Subclasses pin the stable codes."""


class MalformedCommand(RuleError):
    code = "malformed_command"


class WrongPhase(RuleError):
    code = "wrong_phase"


class NotYourTurn(RuleError):
    code = "not_your_turn"


class AlreadyPassed(RuleError):
    code = "already_passed"


class BidOutOfRange(RuleError):
    code = "bid_out_of_range"


class BidTooLow(RuleError):
    code = "bid_too_low"


class MisdealNotAllowed(RuleError):
    code = "misdeal_not_allowed"


class CardNotInHand(RuleError):
    code = "card_not_in_hand"


class BadDiscard(RuleError):
    code = "bad_discard"


class BadTrumpChange(RuleError):
    code = "bad_trump_change"


class BadFriendCall(RuleError):
    code = "bad_friend_call"


class MustFollowSuit(RuleError):
    code = "must_follow_suit"


class IllegalFirstLead(RuleError):
    code = "illegal_first_lead"


class MustPlayJoker(RuleError):
    code = "must_play_joker"


class JokerSuitRequired(RuleError):
    code = "joker_suit_required"


class MustTrump(RuleError):
    """Mitigati (docs/hand-files.md, "Mitigati files"): void in the suit to follow, holding a trump."""

    code = "must_trump"


class BadBargain(RuleError):
    """Mitigati §4/§10: an offer or ask the bargaining rules refuse."""

    code = "bad_bargain"


class BadDeclaration(RuleError):
    """Mitigati §6/§10: a name twice, tarocchi not held, an honour part not the best set."""

    code = "bad_declaration"


class TableError(RuleError):
    """Refusals of the table aggregate (seats, start, deal)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


RULE_ERRORS: dict[str, type[RuleError]] = {
    cls.code: cls
    for cls in (
        MalformedCommand, WrongPhase, NotYourTurn, AlreadyPassed, BidOutOfRange, BidTooLow,
        MisdealNotAllowed, CardNotInHand, BadDiscard, BadTrumpChange, BadFriendCall,
        MustFollowSuit, IllegalFirstLead, MustPlayJoker, JokerSuitRequired,
        MustTrump, BadBargain, BadDeclaration,
    )
}

# Codes that tell another seat nothing of the refused seat's cards: they turn on the
# public state (whose turn, the phase, the auction, the contract) or on the command alone
# (card_not_in_hand does not say which card). The rest would: must_follow_suit says the
# seat holds the led suit, must_play_joker and joker_suit_required that it holds a joker,
# illegal_first_lead that it holds a card it may lead, misdeal_not_allowed that its hand
# is worth more than ½, must_trump that it holds a trump, bad_declaration what it lacks.
PUBLIC_REFUSALS = frozenset({
    MalformedCommand.code, WrongPhase.code, NotYourTurn.code, AlreadyPassed.code,
    BidOutOfRange.code, BidTooLow.code, CardNotInHand.code, BadDiscard.code,
    BadTrumpChange.code, BadFriendCall.code, BadBargain.code,
})
PRIVATE_REFUSAL = "refused"  # the code another seat is given for any other refusal


def refusal_told_to_another_seat(error: RuleError, seat: int | None) -> tuple[str, str]:
    """The code and message a seat other than the sender may be told (docs/rules/mighty.md §8): the
    message may name the command's cards, and some codes reveal what the sender holds."""
    if error.code in PUBLIC_REFUSALS:
        return error.code, f"A command of seat {seat} was refused ({error.code})."
    return PRIVATE_REFUSAL, f"A command of seat {seat} was refused."

"""The bounds of every command field: one schema, for every caller.

A command is checked against its type's fields as annotated here, with exact types (a
bool is not an int, a float is not an int), whether it arrived as JSON (``decode_command``)
or was built in Python (``services/commands/tables.py`` encodes it and decodes it back
through the same decoders). The bounds are generous for the rules (a seat of any table, a
bid or an amount far past any the rules take, a card list of any deck) and tight for
what the rules do not bound (a name, a salt, an option), so no command can carry a value
that makes a message, an event or a log line large: the rules then refuse, with their
own codes, whatever is in bounds and still wrong.
"""

from __future__ import annotations

import re
from typing import Annotated, Final

import msgspec

MAX_COMMAND_BYTES: Final = 16 * 1024  # the largest real command, a deal, is under 1 KiB
MAX_CARDS: Final = 128  # at least the largest deck (mighty-6 has 108 cards)
MAX_QUOTED: Final = 80  # what a message quotes of a bad value, at most

Version = Annotated[int, msgspec.Meta(ge=0, le=9999)]  # a command's schema version
Seat = Annotated[int, msgspec.Meta(ge=0, le=63)]  # the rules check it against the table
Number = Annotated[int, msgspec.Meta(ge=-9999, le=9999)]  # a bid's points, an amount
Card = Annotated[str, msgspec.Meta(max_length=16)]  # "AS", "JK", "2S#1", "21T"
Cards = Annotated[tuple[Card, ...], msgspec.Meta(max_length=MAX_CARDS)]
Word = Annotated[str, msgspec.Meta(max_length=32)]  # a trump, a suit, a variant, an option
Words = Annotated[tuple[Word, ...], msgspec.Meta(max_length=16)]
Name = Annotated[str, msgspec.Meta(max_length=80)]  # a table's name, a closing reason
Salt = Annotated[str, msgspec.Meta(max_length=128)]
Player = Annotated[str, msgspec.Meta(min_length=1, max_length=80)]
OptionValue = bool | Number | Word | None  # make_rules says which are allowed
Options = Annotated[dict[Word, OptionValue], msgspec.Meta(max_length=32)]
Count = Annotated[int, msgspec.Meta(ge=0, le=10_000)]  # a match's hands, a turn's seconds
Bots = Annotated[dict[Word, Word], msgspec.Meta(max_length=64)]  # seat (as text) -> bot level
Stamp = Annotated[str, msgspec.Meta(max_length=40)]  # an ISO 8601 UTC time, given as data

_QUOTED = re.compile("'([^']{" + str(MAX_QUOTED) + "})[^']+'")


def clip(message: str) -> str:
    """``message`` with every quoted value cut to ``MAX_QUOTED`` characters (msgspec
    quotes an unknown tag in full), and the whole cut to a few lines."""
    short = _QUOTED.sub(lambda m: f"'{m.group(1)}...'", message)
    return short if len(short) <= 4 * MAX_QUOTED else short[: 4 * MAX_QUOTED - 3] + "..."

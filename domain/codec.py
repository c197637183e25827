"""Wire formats: commands and events as JSON, through msgspec's typed decoders.

A command that does not decode (unknown ``type``, a missing field, a wrong type) is
``malformed_command`` with msgspec's own description of the fault.

The event union holds the table's own events and every game's (``domain.registry``):
their tags never clash (Mitigati's start with ``mitigati_``). Commands do clash (both
games have ``discard`` and ``play``), so a command is decoded for one game:
``decode_command(data, game="mitigati")`` for a Mitigati table; the default game's is the
default.

A command built in Python is held to the very same schema (``domain/limits.py``):
``checked_submission`` encodes it and decodes it back through its game's decoder, so a
``Bid(points=15.0)`` or a player name holding a lone surrogate is refused as a JSON
client's would be, before the rules see it.
"""

from __future__ import annotations

from typing import Any, Final, Union, get_args

import msgspec
from msgspec.structs import replace

from domain.errors import MalformedCommand
from domain.games import SeatCommand
from domain.limits import Player, clip
from domain.registry import DEFAULT, GAMES
from domain.table import Submission, TableEvent, TableOnlyCommand, TableOnlyEvent, TimeOutTurn
from domain.upcasting import UPCASTERS, Upcaster, current_versions, upcast

TableCommand = TableOnlyCommand | SeatCommand  # what a table decides: its own, or its game's

# The tagged unions msgspec decodes, assembled from the registry at import.
EVENT_UNION: Final[Any] = Union[(  # noqa: UP007 (a union built at run time)
    *get_args(TableOnlyEvent),
    *(cls for game in GAMES.values() for cls in (game.created_type, *game.hand_events)),
)]
COMMAND_UNIONS: Final[dict[str, Any]] = {
    name: Union[(*get_args(TableOnlyCommand), *get_args(game.command_union))]  # noqa: UP007
    for name, game in GAMES.items()
}
# Every command type of every game: for a shape check (``services/commands/tables.py``).
AnyTableCommand: Final[Any] = Union[(  # noqa: UP007
    *get_args(TableOnlyCommand), *(cls for game in GAMES.values() for cls in game.command_types),
)]

_encoder = msgspec.json.Encoder()
_command_decoders = {game: msgspec.json.Decoder(union) for game, union in COMMAND_UNIONS.items()}
# A submission as its game's schema reads it, per game; and the game whose union holds
# each command type (a table's own commands are in every union: the default game's).
_submission_decoders = {
    game: msgspec.json.Decoder(msgspec.defstruct(
        "Submission", [("command", union), ("player", Player | None, None)], frozen=True)).decode
    for game, union in COMMAND_UNIONS.items()
}
_GAME_OF_COMMAND: Final[dict[type, str]] = {
    **{cls: game for game, union in COMMAND_UNIONS.items() for cls in get_args(union)},
    **{cls: DEFAULT.name for cls in get_args(TableOnlyCommand)},
}


def encode_event(event: TableEvent) -> bytes:
    return _encoder.encode(event)


class EventDecoder:
    """Stored bytes to today's events. Today's shape decodes straight through msgspec
    (every event written since the last shape change: the fast path); an older one is
    decoded loosely, upcast step by step (``domain.upcasting``), and converted."""

    def __init__(self, steps: dict[tuple[str, int], Upcaster] | None = None,
                 current: dict[str, int] | None = None) -> None:
        self.steps = UPCASTERS if steps is None else steps
        self.current = current_versions(EVENT_UNION) if current is None else current
        typed = msgspec.json.Decoder(EVENT_UNION).decode
        current_of = {cls: self.current[cls.__struct_config__.tag] for cls in get_args(EVENT_UNION)}
        upcast_ = self._upcast

        def decode(data: bytes) -> TableEvent:  # a closure: the hot path of every reader
            try:
                event = typed(data)  # every event has a schema version ``v``
            except msgspec.ValidationError:
                return upcast_(data)  # an older shape, or a broken event (it raises again)
            if event.v != current_of[type(event)]:
                return upcast_(data)
            today: TableEvent = event
            return today

        self.decode = decode

    def __call__(self, data: bytes) -> TableEvent:
        return self.decode(data)

    def _upcast(self, data: bytes) -> TableEvent:
        raw = msgspec.json.decode(data)
        if isinstance(raw, dict):
            raw = upcast(raw, self.current, self.steps)
        event: TableEvent = msgspec.convert(raw, EVENT_UNION)
        return event


_events = EventDecoder()
decode_event = _events.decode


def encode(value: object) -> bytes:
    return _encoder.encode(value)


def to_builtins(value: object) -> Any:
    return msgspec.to_builtins(value)


def decode_command(data: bytes | str | dict[str, Any], game: str = DEFAULT.name) -> TableCommand:
    """Decode a command from JSON or from a dict for a table of ``game`` (a name of
    ``domain.registry.GAMES``); refuse anything malformed."""
    if game not in COMMAND_UNIONS:
        raise MalformedCommand(f"There is no game {clip(repr(game))}; known: {', '.join(COMMAND_UNIONS)}.")
    try:
        if isinstance(data, dict):
            command: TableCommand = msgspec.convert(data, COMMAND_UNIONS[game])
        else:
            command = _command_decoders[game].decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as error:
        raise MalformedCommand(f"The command is not well formed: {clip(str(error))}.") from None
    except UnicodeEncodeError:  # a str holding a lone surrogate: no UTF-8 reads it
        raise MalformedCommand("The command is not valid Unicode (a lone surrogate).") from None
    return command


def encode_submission(submission: object) -> bytes:
    """A submission's JSON, to be checked by ``checked_submission``; a ``Submission`` of
    no command of any game's, or one holding what JSON cannot (a lone surrogate, an
    object of another type), is ``malformed_command``."""
    if type(submission) is not Submission or type(submission.command) not in _GAME_OF_COMMAND:
        command = getattr(submission, "command", submission)
        raise MalformedCommand(f"Not a table command: a {clip(type(command).__name__)}.")
    try:
        return _encoder.encode(submission)
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError) as error:
        raise MalformedCommand(f"The command holds what JSON cannot: {clip(str(error))}.") from None


def checked_submission(submission: Submission, data: bytes) -> Submission:
    """``submission`` (encoded as ``data`` by ``encode_submission``) decoded back, exactly
    typed and in bounds, by its game's schema; refused as ``malformed_command`` if not."""
    decode = _submission_decoders[_GAME_OF_COMMAND[type(submission.command)]]
    try:
        wire: Any = decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as error:
        where = str(error).replace("`$.command.", "`$.").replace("`$.command`", "`$`")
        raise MalformedCommand(f"The command is not well formed: {clip(where)}.") from None
    command = wire.command
    given = submission.command
    if isinstance(command, TimeOutTurn) and isinstance(given, TimeOutTurn):  # its move is a
        command = replace(command, move=_checked_move(given.move, command.move))  # game's command
    checked: Submission = Submission(command=command, player=wire.player)
    return checked


def _checked_move(given: object, decoded: object) -> SeatCommand:
    """A timed-out turn's ``move`` (decoded loosely, as ``Any``) read again as the command
    of the game it was given as, with that game's schema."""
    game = GAMES.get(_GAME_OF_COMMAND.get(type(given), ""))
    if game is None or not isinstance(given, game.command_types):
        raise MalformedCommand("A timed-out turn's move is not a seat's command of any game.")
    try:
        move: SeatCommand = msgspec.convert(decoded, game.command_union, strict=True)
    except msgspec.ValidationError as error:
        raise MalformedCommand(f"The timed-out turn's move is not well formed: {clip(str(error))}.") from None
    return move

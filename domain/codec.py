"""Wire formats: commands and events as JSON, through msgspec's typed decoders.

A command that does not decode (unknown ``type``, a missing field, a wrong type) is
``malformed_command`` with msgspec's own description of the fault.

The event union holds the table's own events and every game's (``domain.registry``):
their tags never clash (Mitigati's start with ``mitigati_``). Commands do clash (both
games have ``discard`` and ``play``), so a command is decoded for one game:
``decode_command(data, game="mitigati")`` for a Mitigati table; the default game's is the
default.
"""

from __future__ import annotations

from typing import Any, Final, Union, get_args

import msgspec

from domain.errors import MalformedCommand
from domain.games import SeatCommand
from domain.registry import DEFAULT, GAMES
from domain.table import TableEvent, TableOnlyCommand, TableOnlyEvent
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
        raise MalformedCommand(f"There is no game {game!r}; known: {', '.join(COMMAND_UNIONS)}.")
    try:
        if isinstance(data, dict):
            command: TableCommand = msgspec.convert(data, COMMAND_UNIONS[game])
        else:
            command = _command_decoders[game].decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as error:
        raise MalformedCommand(f"The command is not well formed: {error}.") from None
    return command

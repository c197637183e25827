"""Wire formats: commands and events as JSON, through msgspec's typed decoders.

A command that does not decode (unknown ``type``, a missing field, a wrong type) is
``malformed_command`` with msgspec's own description of the fault.

The event union holds every game's events (their tags never clash: Mitigati's start with
``mitigati_``). Commands do clash (both games have ``discard`` and ``play``), so a command
is decoded for one game: ``decode_command(data, game="mitigati")`` for a Mitigati table;
Mighty's is the default.
"""

from __future__ import annotations

from typing import Any, get_args

import msgspec

from domain.errors import MalformedCommand
from domain.mighty.commands import HandCommand
from domain.mitigati.commands import MitigatiCommand
from domain.table import TableEvent, TableOnlyCommand
from domain.upcasting import UPCASTERS, Upcaster, current_versions, upcast

TableCommand = TableOnlyCommand | HandCommand
MitigatiTableCommand = TableOnlyCommand | MitigatiCommand
AnyTableCommand = TableOnlyCommand | HandCommand | MitigatiCommand
COMMAND_UNIONS: dict[str, Any] = {"mighty": TableCommand, "mitigati": MitigatiTableCommand}

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
        self.current = current_versions(TableEvent) if current is None else current
        typed = msgspec.json.Decoder(TableEvent).decode
        current_of = {cls: self.current[cls.__struct_config__.tag] for cls in get_args(TableEvent)}
        upcast_ = self._upcast

        def decode(data: bytes) -> TableEvent:  # a closure: the hot path of every reader
            try:
                event: TableEvent = typed(data)
            except msgspec.ValidationError:
                return upcast_(data)  # an older shape, or a broken event (it raises again)
            if event.v != current_of[type(event)]:
                return upcast_(data)
            return event

        self.decode = decode

    def __call__(self, data: bytes) -> TableEvent:
        return self.decode(data)

    def _upcast(self, data: bytes) -> TableEvent:
        raw = msgspec.json.decode(data)
        if isinstance(raw, dict):
            raw = upcast(raw, self.current, self.steps)
        event: TableEvent = msgspec.convert(raw, TableEvent)
        return event


_events = EventDecoder()
decode_event = _events.decode


def encode(value: object) -> bytes:
    return _encoder.encode(value)


def to_builtins(value: object) -> Any:
    return msgspec.to_builtins(value)


def decode_command(data: bytes | str | dict[str, Any], game: str = "mighty") -> AnyTableCommand:
    """Decode a command from JSON or from a dict for a table of ``game`` (``mighty`` or
    ``mitigati``); refuse anything malformed."""
    if game not in COMMAND_UNIONS:
        raise MalformedCommand(f"There is no game {game!r}; known: {', '.join(COMMAND_UNIONS)}.")
    try:
        if isinstance(data, dict):
            command: AnyTableCommand = msgspec.convert(data, COMMAND_UNIONS[game])
        else:
            command = _command_decoders[game].decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as error:
        raise MalformedCommand(f"The command is not well formed: {error}.") from None
    return command


def decode_hand_command(data: object) -> HandCommand:
    """A hand-file command: anything but a well-formed object is ``malformed_command``."""
    try:
        command: HandCommand = msgspec.convert(data, HandCommand)
    except msgspec.ValidationError as error:
        raise MalformedCommand(f"The command is not well formed: {error}.") from None
    return command


"""Wire formats: commands and events as JSON, through msgspec's typed decoders.

A command that does not decode (unknown ``type``, a missing field, a wrong type) is
``malformed_command`` with msgspec's own description of the fault.
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.commands import HandCommand
from domain.errors import MalformedCommand
from domain.table import TableEvent, TableOnlyCommand

TableCommand = TableOnlyCommand | HandCommand

_encoder = msgspec.json.Encoder()
_event_decoder = msgspec.json.Decoder(TableEvent)
_command_decoder = msgspec.json.Decoder(TableCommand)


def encode_event(event: TableEvent) -> bytes:
    return _encoder.encode(event)


def decode_event(data: bytes) -> TableEvent:
    event: TableEvent = _event_decoder.decode(data)
    return event


def encode(value: object) -> bytes:
    return _encoder.encode(value)


def to_builtins(value: object) -> Any:
    return msgspec.to_builtins(value)


def decode_command(data: bytes | str | dict[str, Any]) -> TableCommand:
    """Decode a command from JSON or from a dict; refuse anything malformed."""
    try:
        if isinstance(data, dict):
            command: TableCommand = msgspec.convert(data, TableCommand)
        else:
            command = _command_decoder.decode(data)
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


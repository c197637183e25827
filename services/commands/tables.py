"""The command handler wired to the table aggregate (domain/table.py, domain/codec.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, get_args

import msgspec

from domain import codec, table
from domain.codec import AnyTableCommand
from domain.errors import MalformedCommand
from domain.table import Submission, TableEvent, TableState
from services.commands.handler import CommandHandler
from services.store.base import EventStore
from services.store.errors import PayloadTooLarge

TableHandler = CommandHandler[TableState, Submission, TableEvent]
MAX_COMMAND_BYTES: Final = 16 * 1024  # the largest real command, a deal, is under 1 KiB

_encode = msgspec.json.Encoder().encode


_COMMAND_TYPES: Final = frozenset(get_args(AnyTableCommand))


class TableDecider:
    """The table's decider and event codec behind the ``Decider`` protocol.

    The domain's functions are bound as static methods, not wrapped: no extra call on the
    hot path but the shape check in ``decide``.
    """

    initial_state = staticmethod(table.initial_state)
    evolve = staticmethod(table.evolve)
    encode_event = staticmethod(codec.encode_event)
    decode_event = staticmethod(codec.decode_event)

    @staticmethod
    def decide(state: TableState, command: Submission) -> Sequence[TableEvent]:
        # Commands from the wire are checked field by field in submission_from_wire; here
        # only the shape, so a caller's mistake is a refusal rather than an AttributeError.
        if type(command) is not Submission or type(command.command) not in _COMMAND_TYPES:
            raise MalformedCommand(f"not a table command: {type(command).__name__}")
        return table.decide(state, command)


def table_handler(store: EventStore, **options: Any) -> TableHandler:
    return CommandHandler(store, TableDecider(), **options)


def submission_from_wire(data: bytes | str | dict[str, Any], player: str | None,
                         game: str = "mighty") -> Submission:
    """A command as a client sends it (JSON or a dict), checked, in ``player``'s name, for
    a table of ``game`` (the command types of Mighty and Mitigati share tags)."""
    if isinstance(data, bytes | str):
        size = len(data)
    elif isinstance(data, dict):
        try:
            size = len(_encode(data))
        except (TypeError, msgspec.EncodeError) as error:
            raise MalformedCommand(f"a command holds what JSON cannot: {error}") from None
    else:
        raise MalformedCommand(f"a command is a JSON object, not {type(data).__name__}")
    if size > MAX_COMMAND_BYTES:
        raise PayloadTooLarge(f"a command is {size} bytes, the limit is {MAX_COMMAND_BYTES}")
    return Submission(command=codec.decode_command(data, game), player=player)

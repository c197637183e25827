"""The command handler wired to the table aggregate (domain/table.py, domain/codec.py).

Whatever the caller (the JSON path through ``submission_from_wire``, or Python code
building commands), ``TableDecider.decide`` holds every command to its schema before the
rules see it (``domain/limits.py``: exact types, bounded strings and lists, valid
Unicode); every event the rules make is encoded and decoded back before it may be
appended, so nothing undecodable is ever stored; and an exception of the rules that is not
a refusal is ``internal_error`` (logged with its table, command and traceback; nothing
written), never a crash of the caller's process.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from typing import Any, Final

import msgspec
import structlog

from domain import codec, table
from domain.errors import InternalError, MalformedCommand, MightyError
from domain.limits import MAX_COMMAND_BYTES, clip
from domain.table import Submission, TableEvent, TableState
from services.commands.handler import CommandHandler
from services.store.base import EventStore
from services.store.errors import PayloadTooLarge

__all__ = ["MAX_COMMAND_BYTES", "TableDecider", "TableHandler", "submission_from_wire", "table_handler"]

TableHandler = CommandHandler[TableState, Submission, TableEvent]

_encode = msgspec.json.Encoder().encode
_log = structlog.get_logger("mighty.commands")
_DECODE_ERRORS: Final = (msgspec.ValidationError, msgspec.DecodeError, MightyError)


class TableDecider:
    """The table's decider and event codec behind the ``Decider`` protocol.

    The domain's functions are bound as static methods, not wrapped, but ``decide``: it
    checks the command first and the events after (a few µs, docs/performance.md).
    """

    initial_state = staticmethod(table.initial_state)
    evolve = staticmethod(table.evolve)
    encode_event = staticmethod(codec.encode_event)
    decode_event = staticmethod(codec.decode_event)

    @staticmethod
    def is_closed(state: TableState) -> bool:
        return state.status == "closed"

    @staticmethod
    def decide(state: TableState, command: Submission) -> Sequence[TableEvent]:
        data = codec.encode_submission(command)
        if len(data) > MAX_COMMAND_BYTES:
            raise PayloadTooLarge(f"a command is {len(data)} bytes, the limit is {MAX_COMMAND_BYTES}")
        checked = codec.checked_submission(command, data)
        try:
            events = table.decide(state, checked)
        except MightyError:
            raise
        except Exception as error:  # noqa: BLE001 - a fault of the rules, not the caller's
            raise _internal(state, checked, "the rules failed on it", error) from None
        decode = codec.decode_event
        for event in events:  # what is stored must read back: check before the append
            try:
                decode(codec.encode_event(event))
            except (*_DECODE_ERRORS, TypeError, ValueError) as error:
                raise _internal(state, checked, f"the rules made a {type(event).__name__} that "
                                                "does not decode", error) from None
        return events


def _internal(state: TableState, command: Submission, what: str, error: Exception) -> InternalError:
    """The fault logged (with the traceback of ``error``) and the error the caller gets."""
    _log.error("internal_error", table=state.table_id, command=clip(repr(command)), problem=what,
               error=clip(f"{type(error).__name__}: {error}"),
               traceback="".join(traceback.format_exception(error)))
    return InternalError(f"Table {state.table_id}: {what} ({type(error).__name__}); "
                         "nothing was written. This is a fault of the service, logged.")


def table_handler(store: EventStore, **options: Any) -> TableHandler:
    return CommandHandler(store, TableDecider(), **options)


def submission_from_wire(data: bytes | str | dict[str, Any], player: str | None,
                         game: str = "mighty") -> Submission:
    """A command as a client sends it (JSON or a dict), checked, in ``player``'s name, for
    a table of ``game`` (the command types of Mighty and Mitigati share tags)."""
    if isinstance(data, dict):
        # measured and decoded as its JSON: a decoder built once per game reads it in a
        # fraction of a microsecond, where converting the dict to the game's command union
        # rebuilds the union's schema on every call (~20 us)
        try:
            data = _encode(data)
        except (TypeError, ValueError, OverflowError, msgspec.EncodeError) as error:
            raise MalformedCommand(f"a command holds what JSON cannot: {clip(str(error))}") from None
    elif not isinstance(data, bytes | str):
        raise MalformedCommand(f"a command is a JSON object, not {clip(type(data).__name__)}")
    if len(data) > MAX_COMMAND_BYTES:
        raise PayloadTooLarge(f"a command is {len(data)} bytes, the limit is {MAX_COMMAND_BYTES}")
    return Submission(command=codec.decode_command(data, game), player=player)

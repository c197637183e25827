"""The service's own steps at a table (docs/rules/mighty.md §2): start it once every seat is
taken, deal each hand when one is due. Whoever sent the command that made a step due
takes it (a gateway after a player's command, the bot worker after a bot's), with an id
any of them would give it (``start``, ``deal-<n>``), so two processes taking the same
step at once append it once: the second is answered as a duplicate or refused by the
first's effect, which is fine: it was taken.

Two shapes of one loop (docs/architecture.md, "The application layer"): ``service_steps``
on the synchronous command path (the bot and timer workers, the benches)
and ``service_steps_async`` over the ``Tables`` port (the gateway's use cases).
"""

from __future__ import annotations

import structlog

from domain.errors import MightyError
from domain.table import Submission, TableEvent, TableState
from services.app.ports import Tables
from services.commands.core import CommandResult
from services.commands.dealer import deal_command, start_command
from services.commands.tables import TableHandler

log = structlog.get_logger("mighty.steps")

MAX_STEPS = 3  # a start, then a deal: never more in a row


def next_step(state: TableState) -> tuple[Submission, str] | None:
    """The step due at ``state`` and its command id, or None."""
    if state.status == "open" and state.seats and None not in state.seats:
        assert state.rules is not None
        starter = next(p for p in state.seats if p is not None)
        return Submission(start_command(state.rules), starter), "start"
    if state.awaiting_deal:
        assert state.rules is not None
        return Submission(deal_command(state.rules)), f"deal-{state.hand_no + 1}"
    return None


def service_steps(handler: TableHandler, table_id: str, state: TableState) -> TableState:
    """Take every step due, on the synchronous command path; the state after them."""
    for _ in range(MAX_STEPS):
        step = next_step(state)
        if step is None:
            return state
        submission, command_id = step
        try:
            handler.handle(table_id, submission, command_id=command_id)
        except MightyError as refused:
            log.info("service_step_taken", table=table_id, code=refused.code)
        state, _ = handler.state_of(table_id)
    return state


def send_then_step(handler: TableHandler, table_id: str, submission: Submission, command_id: str, *,
                   cached: bool = False) -> CommandResult[TableEvent]:
    """A command the service sends itself at a seat's turn (a bot's move, a turn timed
    out), then the steps it made due; ``cached``: the steps start from the handler's
    cached state (after its own append: no read), else from the stream."""
    result = handler.handle(table_id, submission, command_id=command_id)
    known = handler.cached(table_id) if cached else None
    state = known[0] if known is not None else handler.state_of(table_id)[0]
    service_steps(handler, table_id, state)
    return result


async def send(backend: Tables, table_id: str, submission: Submission, command_id: str) -> TableState:
    """Append one command; the table's state after it (read again for a duplicate)."""
    result = await backend.submit(table_id, submission, command_id)
    if result.state is not None:
        return result.state
    state, _ = await backend.state(table_id)
    return state


async def service_steps_async(backend: Tables, table_id: str, state: TableState) -> TableState:
    """``service_steps`` over the ``Tables`` port (the gateway's use cases): a step
    another process took first is refused here, which is fine: it was taken."""
    for _ in range(MAX_STEPS):
        step = next_step(state)
        if step is None:
            return state
        submission, command_id = step
        try:
            state = await send(backend, table_id, submission, command_id)
        except MightyError as refused:
            log.info("service_step_taken", table=table_id, code=refused.code)
            state, _ = await backend.state(table_id)
    return state

"""A player's command at their seat (docs/api.md, "Playing"): the store's command id is
the player's id with the client's, and the service's steps it made due are taken."""

from __future__ import annotations

from typing import Any

from services.app.errors import Refused
from services.app.ports import Tables
from services.app.seats import seat_of
from services.app.steps import service_steps_async
from services.commands.tables import submission_from_wire


async def play(backend: Tables, table_id: str, player: str, client_id: str, command: dict[str, Any],
               noted: dict[str, Any] | None = None) -> int:
    """A player's command, in the hand-file format without ``seat`` (the caller's). The
    store's command id is the player's id with the client's, so two players' ids never
    meet; the same id again answers as the first time and changes nothing but the
    service's steps it made due, if they are still untaken."""
    state, seat = await seat_of(backend, table_id, player)
    if noted is not None:
        noted["seat"] = seat  # for the command's log line
    given = command.get("seat", seat)
    if given != seat:
        raise Refused("not_your_seat", f"Seat {given} is not yours; yours is {seat}.")
    game = state.game
    submission = submission_from_wire({**command, "seat": seat}, player, game.name)
    if not isinstance(submission.command, game.command_types):
        raise Refused("malformed_command", f"{command.get('type')!r} is not a command of a {game.name} hand.")
    result = await backend.submit(table_id, submission, f"{player}:{client_id}")
    after = result.state
    if after is None:
        after, _ = await backend.state(table_id)
    # A duplicate too: whoever appended it first may have died (or lost Redis) before
    # taking the steps it made due, and only this retry is left to take them.
    await service_steps_async(backend, table_id, after)
    await backend.touch(table_id, after.status)  # a person acted
    # they are there: a seat whose stream was open once is not sent away while its player
    # acts over HTTP (one who never opened a stream has no record: presence.py)
    await backend.here(table_id, player, known_only=True)
    return result.version

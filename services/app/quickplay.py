"""Quickplay (docs/api.md, "The lobby"): be seated at the game's waiting quickplay table,
wait for others, then the free seats go to bots."""

from __future__ import annotations

import asyncio
import random
import secrets
import time

from domain.bots import bot_name
from domain.errors import MightyError
from domain.table import JoinSeat, Submission, TableState
from services.app.errors import Refused
from services.app.ports import Tables
from services.app.seats import join
from services.app.steps import send, service_steps_async
from services.app.tables import create_table, new_table_id
from services.gateway.wire import NewTable
from services.store.errors import VersionConflict

QUICKPLAY_NAME = "quickplay"


QUICKPLAY_SEATING_S = 20.0  # how long a quickplay may take to be seated, contention included


async def quickplay(backend: Tables, player: str, game: str, wait_seconds: float) -> tuple[str, int]:
    """Seat the player at the game's waiting quickplay table (a new one if none has a
    free seat); wait for others up to ``wait_seconds``, then give the free seats bots.

    Each caller is seated exactly once: a player already waiting for the game (another
    request, a retry) gets the same table and seat (``quickplay:<game>:<player>``).
    Contention (a table filling, a seat taken first, a table created by another) is
    waited out, never answered 503: only the store's own outage is."""
    started = time.monotonic()
    own = f"quickplay:{game}:{player}"
    shared = f"quickplay:{game}"
    # One request of a player seats it at a time (on any gateway): the others wait for
    # its seat and answer it. Two at once could each lose a race for a table, give their
    # claim up and be seated at two tables.
    seating, token = f"quickplay-seating:{game}:{player}", secrets.token_hex(4)
    while await backend.claim(seating, token, ttl_s=int(QUICKPLAY_SEATING_S) + 10) != token:
        if time.monotonic() - started > QUICKPLAY_SEATING_S:
            raise Refused("unavailable", "No quickplay table could be had; try again.")
        await asyncio.sleep(0.05)
        seated = await _seated_by_another(backend, own, player)
        if seated is not None:
            table_id, seat = seated
            return await _wait_for_others(backend, shared, table_id, seat, started + wait_seconds)
    try:
        table_id, seat = await _seat_for_quickplay(backend, player, game, own, shared, started, wait_seconds)
    finally:
        await backend.release(seating, token)
    return await _wait_for_others(backend, shared, table_id, seat, started + wait_seconds)


async def _seated_by_another(backend: Tables, own: str, player: str) -> tuple[str, int] | None:
    """The table and seat this player's other quickplay request has seated it at."""
    waiting = await backend.claimed(own)
    if waiting is None:
        return None
    state, _ = await backend.state(waiting)
    if player in state.seats and state.status != "closed":
        return waiting, state.seats.index(player)
    return None


async def _seat_for_quickplay(backend: Tables, player: str, game: str, own: str, shared: str,
                              started: float, wait_seconds: float) -> tuple[str, int]:
    attempt = 0
    while True:
        attempt += 1
        if time.monotonic() - started > QUICKPLAY_SEATING_S:
            raise Refused("unavailable", "No quickplay table could be had; try again.")
        if attempt > 1:  # spread the losers of a race out
            await asyncio.sleep(random.uniform(0.0, min(0.02 * attempt, 0.2)))
        waiting = await backend.claimed(own)
        if waiting is not None:
            state = await _created(backend, waiting)
            if state is not None and player in state.seats and state.status != "closed":
                return waiting, state.seats.index(player)
            if state is not None and state.status == "open":
                table_id = waiting  # this player's other request chose it: join it too
            else:
                await backend.release(own, waiting)
                continue
        else:
            candidate = new_table_id()
            table_id = await backend.claim(shared, candidate, ttl_s=120)
            if table_id == candidate:
                await create_table(backend, player, NewTable(game=game, name=QUICKPLAY_NAME, seat=None),
                                   table_id=table_id)
            if await backend.claim(own, table_id, ttl_s=int(wait_seconds) + 120) != table_id:
                continue  # this player's other request chose another table first: follow it
            if await _created(backend, table_id) is None:  # its creator is gone: another one
                await backend.release(shared, table_id)
                await backend.release(own, table_id)
                continue
        try:
            seat = await join(backend, table_id, player, None)
        except Refused as error:
            if error.code not in ("table_full", "table_started", "table_closed", "unknown_table"):
                raise
            await backend.release(shared, table_id)
            await backend.release(own, table_id)
            continue
        except VersionConflict:  # many joined at once past the handler's retries: again
            continue
        return table_id, seat


async def _created(backend: Tables, table_id: str, wait_s: float = 3.0) -> TableState | None:
    """The table's state once its creator has created it (None: not within ``wait_s``)."""
    deadline = time.monotonic() + wait_s
    while True:
        state, _ = await backend.state(table_id)
        if state.status != "new":
            return state
        if time.monotonic() > deadline:
            return None
        await asyncio.sleep(0.05)


async def _wait_for_others(backend: Tables, shared: str, table_id: str, seat: int,
                           deadline: float) -> tuple[str, int]:
    while time.monotonic() < deadline:
        state, _ = await backend.state(table_id)
        if state.status != "open":
            return table_id, seat
        await asyncio.sleep(0.2)
    await backend.release(shared, table_id)
    await fill_with_bots(backend, table_id)
    return table_id, seat


async def fill_with_bots(backend: Tables, table_id: str, level: str = "beginner") -> None:
    state, _ = await backend.state(table_id)
    for seat, holder in enumerate(state.seats):
        if holder is not None or state.status != "open":
            continue
        bot = await backend.create_player(bot_name(level, table_id, seat), bot=level)
        try:
            state = await send(backend, table_id, Submission(JoinSeat(seat=seat), bot.player), f"bot-{seat}")
        except MightyError as error:
            if error.code not in ("seat_taken", "wrong_phase", "command_id_reused"):
                raise
            state, _ = await backend.state(table_id)
    await service_steps_async(backend, table_id, state)

"""A seat: taken (the first free one, or the one asked for), left (freed before the
start, sent away after it), taken back (the player joined again or opened their stream),
and a rematch's seats kept for the players of the match before (docs/api.md, "The
lobby"; docs/bots.md, "Away seats")."""

from __future__ import annotations

import secrets

import msgspec

from domain.errors import MightyError
from domain.table import JoinSeat, LeaveSeat, SetAway, Submission, TableState
from services.app.errors import Refused
from services.app.ports import Tables
from services.app.steps import send, service_steps_async


async def _check_reputation(backend: Tables, player: str, least: int) -> None:
    """A table's creator asked for players who finish their hands (docs/ratings.md,
    "Reputation"): the share of the player's hands they finished, in percent (a player
    with none yet passes)."""
    _, reputation = await backend.player_ratings(player)
    if reputation is None or reputation.finished + reputation.abandoned == 0:
        return
    share = 100 * reputation.finished // (reputation.finished + reputation.abandoned)
    if share < least:
        raise Refused("reputation_too_low", f"This table asks for players who finished {least}% of their hands; "
                      f"you finished {share}%.")


async def join(backend: Tables, table_id: str, player: str, seat: int | None) -> int:
    state, _ = await backend.state(table_id)
    _exists(state, table_id)
    if player in state.seats:  # joining again: the same seat; back from away if so
        mine = state.seats.index(player)
        if seat is not None and seat != mine:
            raise Refused("already_seated", f"You hold seat {mine} at this table.")
        await back(backend, table_id, player, state)
        state = await service_steps_async(backend, table_id, state)  # a join retried: its start may be untaken
        await backend.touch(table_id, state.status)
        return mine
    if state.status == "closed":
        raise Refused("table_closed", f"Table {table_id} is finished.")
    if state.status == "playing":
        raise Refused("table_started", f"Table {table_id} has started; its seats are fixed.")
    if seat is not None and seat >= len(state.seats):
        raise Refused("invalid_request", f"Seat {seat} is not a seat of 0..{len(state.seats) - 1}.")
    if state.min_reputation:
        await _check_reputation(backend, player, state.min_reputation)
    for _ in range(len(state.seats) + 1):
        free = [s for s, p in enumerate(state.seats) if p is None]
        if seat is None and not free:
            raise Refused("table_full", f"Every seat of table {table_id} is taken.")
        chosen = seat if seat is not None else free[0]
        try:
            state = await send(backend, table_id, Submission(JoinSeat(seat=chosen), player),
                               f"join-{player}-{_nonce()}")
        except MightyError as error:
            if error.code == "seat_taken" and seat is None:  # another took it first: the next one
                state, _ = await backend.state(table_id)
                continue
            if error.code == "already_seated":  # this player's other request (a retry) sat first
                state, _ = await backend.state(table_id)
                if player in state.seats and (seat is None or state.seats.index(player) == seat):
                    return state.seats.index(player)
            if error.code == "wrong_phase":
                raise Refused("table_started", f"Table {table_id} has started; its seats are fixed.") from None
            raise
        state = await service_steps_async(backend, table_id, state)
        await backend.touch(table_id, state.status)
        return chosen
    raise Refused("table_full", f"Every seat of table {table_id} is taken.")


async def back(backend: Tables, table_id: str, player: str, state: TableState) -> None:
    """The player is back at a started table whose seat was away (they joined again, or
    opened their stream): they play it again (``SetAway(away=False)``, in their name)."""
    if state.status != "playing" or player not in state.seats:
        return
    mine = state.seats.index(player)
    if mine not in state.away:
        return
    try:
        await send(backend, table_id, Submission(SetAway(seat=mine, away=False), player),
                   f"back-{player}-{state.hand_no}-{_nonce()}")
    except MightyError as error:
        if error.code != "not_away":
            raise


async def seat_of(backend: Tables, table_id: str, player: str) -> tuple[TableState, int]:
    """The table's state and the seat ``player`` holds there (``not_your_seat`` if none).

    Seats do not change while a table plays: a cached playing state that seats the
    player names the seat without a read (if the cache is behind, the append conflicts
    and the handler decides again on the caught-up state, which checks the seat too)."""
    cached = backend.cached(table_id)
    if cached is not None and cached[0].status == "playing" and player in cached[0].seats:
        state = cached[0]
    else:
        state, _ = await backend.state(table_id)
    _exists(state, table_id)
    if player not in state.seats:
        raise Refused("not_your_seat", f"You hold no seat at table {table_id}.")
    return state, state.seats.index(player)


async def leave(backend: Tables, table_id: str, player: str) -> None:
    """Before the start the seat is freed; after it the seat is marked away, and the
    service's bot plays it until the player joins again."""
    state, seat = await seat_of(backend, table_id, player)
    if state.status == "closed":
        raise Refused("table_closed", f"Table {table_id} is finished.")
    await backend.touch(table_id, state.status)
    if state.status == "open":
        await send(backend, table_id, Submission(LeaveSeat(seat=seat), player), f"leave-{player}-{_nonce()}")
        return
    if seat in state.away:
        return
    try:
        await send(backend, table_id, Submission(SetAway(seat=seat), player), f"away-{player}-{_nonce()}")
    except MightyError as error:
        if error.code != "already_away":
            raise


def _exists(state: TableState, table_id: str) -> None:
    if state.status == "new":
        raise Refused("unknown_table", f"There is no table {table_id}.")


def _nonce() -> str:
    return secrets.token_hex(4)


async def kept_seat(backend: Tables, table_id: str, player: str, seat: int | None) -> int | None:
    """A rematch's seats are kept for the players of the match it follows: the seat a
    joining player must take there (None: the table is no rematch, any seat will do);
    403 ``not_your_seat`` for anyone else, or for another seat."""
    held = await backend.claimed(f"rematch-seats:{table_id}")
    if held is None:
        return None
    kept: dict[str, int] = msgspec.json.decode(held)
    if player not in kept:
        raise Refused("not_your_seat", f"Table {table_id} is a rematch: its seats are kept for the "
                      "players of the match before it.")
    if seat is not None and seat != kept[player]:
        raise Refused("not_your_seat", f"Seat {seat} is kept for another player; yours is {kept[player]}.")
    return kept[player]

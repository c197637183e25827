"""What the service does around a table, over the ``Backend``: create it with its bots,
seat and unseat players, start it when every seat is taken, deal each hand, play a
player's command, quickplay and rematch (API.md, Lobby and Playing).

Every command the service sends itself has an id that any gateway would give it (the
start, ``deal-<n>``, ``bot-<seat>``), so two gateways doing the same step at once append
it once: the second is answered as a duplicate or refused by the first's effect.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from datetime import UTC, datetime
from typing import Any

import structlog

from domain.errors import MightyError
from domain.games import Rules
from domain.registry import game_named, game_of, rules_of_directory
from domain.table import (
    CreateTable,
    JoinSeat,
    LeaveSeat,
    SetAway,
    Submission,
    TableState,
)
from projections.directory import DirectoryEntry, game_fields
from services.commands.steps import MAX_STEPS, next_step
from services.commands.tables import submission_from_wire
from services.gateway.backend import Backend, PlayerRecord
from services.gateway.errors import ApiError
from services.gateway.wire import NewTable, Seat, Table

log = structlog.get_logger("mighty.gateway")

_BOT_LEVEL = re.compile(r"[a-z][a-z0-9_-]{0,23}")
QUICKPLAY_NAME = "quickplay"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def new_table_id() -> str:
    return "t" + secrets.token_hex(6)


# ---------------------------------------------------------------- tables as the API shows them


def status_of(entry: DirectoryEntry) -> str:
    return {"closed": "finished", "playing": "playing"}.get(entry.status, "open")


def rules_of_entry(entry: DirectoryEntry) -> Rules:
    return rules_of_directory(game_fields(entry))


def game_of_entry(entry: DirectoryEntry) -> str:
    """The ``game`` a client names in ``POST /tables``: the rule set's variant."""
    return rules_of_entry(entry).variant


def options_of_entry(entry: DirectoryEntry) -> dict[str, Any]:
    rules = rules_of_entry(entry)
    return game_of(rules).table_options(rules)


async def table_of(backend: Backend, entry: DirectoryEntry) -> Table:
    names = await backend.players([p for p in entry.seats if p is not None])
    return _table(entry, names)


async def tables_of(backend: Backend, entries: list[DirectoryEntry]) -> list[Table]:
    names = await backend.players([p for e in entries for p in e.seats if p is not None])
    return [_table(entry, names) for entry in entries]


def _table(entry: DirectoryEntry, names: dict[str, PlayerRecord]) -> Table:
    seats = []
    for seat, player in enumerate(entry.seats):
        record = names.get(player) if player is not None else None
        bot = entry.bots.get(str(seat)) or (record.bot if record else None)
        seats.append(Seat(seat=seat, player=player, name=record.name if record else None,
                          bot=bot if player is not None else None, away=seat in entry.away))
    return Table(
        table=entry.table_id, name=entry.name, game=game_of_entry(entry),
        options=options_of_entry(entry),
        status=status_of(entry),  # type: ignore[arg-type]
        seats=seats, hands=entry.hands, hands_played=entry.hands_scored,
        turn_seconds=entry.turn_seconds, created=entry.created, version=entry.version,
        reason=entry.reason or None,
    )


async def fresh_table(backend: Backend, table_id: str) -> Table:
    """The table as its stream says now (after a change the caller made: the directory
    may not show it yet)."""
    entry = await backend.entry(table_id, fresh=True)
    if entry is None:
        raise ApiError("unknown_table", f"There is no table {table_id}.")
    return await table_of(backend, entry)


# ---------------------------------------------------------------- the service's own steps


async def send(backend: Backend, table_id: str, submission: Submission, command_id: str) -> TableState:
    result = await backend.submit(table_id, submission, command_id)
    if result.state is not None:
        return result.state
    state, _ = await backend.state(table_id)
    return state


async def service_steps(backend: Backend, table_id: str, state: TableState) -> TableState:
    """Start a full table; deal when a hand is due (rules/mighty.md §2;
    ``services/commands/steps.py``, which the bot worker takes them by too). A step
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


# ---------------------------------------------------------------- lobby


def _check_bots(bots: dict[str, str], players: int, seat: int | None) -> None:
    for key, level in bots.items():
        if not (key.isdigit() and int(key) < players):
            raise ApiError("invalid_request", f"bots: {key!r} is not a seat of 0..{players - 1}.")
        if not _BOT_LEVEL.fullmatch(level):
            raise ApiError("invalid_request", f"bots: {level!r} is not a bot level.")
        if seat is not None and int(key) == seat:
            raise ApiError("seat_taken", f"Seat {seat} is given to a bot and to you.")
    if seat is not None and seat >= players:
        raise ApiError("invalid_request", f"Seat {seat} is not a seat of 0..{players - 1}.")


async def create_table(backend: Backend, player: str, body: NewTable, table_id: str | None = None) -> Table:
    try:
        rules = game_named(body.game).make_rules(body.game, body.options)
    except MightyError as error:
        raise ApiError("invalid_request", error.message) from None
    players = game_of(rules).players(rules)
    _check_bots(body.bots, players, body.seat)
    table_id = table_id or new_table_id()
    create = CreateTable(variant=body.game, options=body.options, name=body.name or table_id,
                         hands=body.hands, turn_seconds=body.turn_seconds, bots=dict(body.bots),
                         created=now_iso())
    state = await send(backend, table_id, Submission(create, player), "create")
    for key, level in sorted(body.bots.items()):
        bot = await backend.create_player(f"{level} bot", bot=level)
        state = await send(backend, table_id, Submission(JoinSeat(seat=int(key)), bot.player), f"bot-{key}")
    if body.seat is not None:
        state = await send(backend, table_id, Submission(JoinSeat(seat=body.seat), player), f"join-{player}")
    await service_steps(backend, table_id, state)
    return await fresh_table(backend, table_id)


async def join(backend: Backend, table_id: str, player: str, seat: int | None) -> int:
    state, _ = await backend.state(table_id)
    _exists(state, table_id)
    if player in state.seats:  # joining again: the same seat; back from away if so
        mine = state.seats.index(player)
        if seat is not None and seat != mine:
            raise ApiError("already_seated", f"You hold seat {mine} at this table.")
        if mine in state.away:
            try:
                await send(backend, table_id, Submission(SetAway(seat=mine, away=False), player),
                           f"back-{player}-{state.hand_no}-{_nonce()}")
            except MightyError as error:
                if error.code != "not_away":
                    raise
        await service_steps(backend, table_id, state)  # a join retried: its start may be untaken
        return mine
    if state.status == "closed":
        raise ApiError("table_closed", f"Table {table_id} is finished.")
    if state.status == "playing":
        raise ApiError("table_started", f"Table {table_id} has started; its seats are fixed.")
    if seat is not None and seat >= len(state.seats):
        raise ApiError("invalid_request", f"Seat {seat} is not a seat of 0..{len(state.seats) - 1}.")
    for _ in range(len(state.seats) + 1):
        free = [s for s, p in enumerate(state.seats) if p is None]
        if seat is None and not free:
            raise ApiError("table_full", f"Every seat of table {table_id} is taken.")
        chosen = seat if seat is not None else free[0]
        try:
            state = await send(backend, table_id, Submission(JoinSeat(seat=chosen), player),
                               f"join-{player}-{_nonce()}")
        except MightyError as error:
            if error.code == "seat_taken" and seat is None:  # another took it first: the next one
                state, _ = await backend.state(table_id)
                continue
            if error.code == "wrong_phase":
                raise ApiError("table_started", f"Table {table_id} has started; its seats are fixed.") from None
            raise
        await service_steps(backend, table_id, state)
        return chosen
    raise ApiError("table_full", f"Every seat of table {table_id} is taken.")


async def _seat_of(backend: Backend, table_id: str, player: str) -> tuple[TableState, int]:
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
        raise ApiError("not_your_seat", f"You hold no seat at table {table_id}.")
    return state, state.seats.index(player)


async def leave(backend: Backend, table_id: str, player: str) -> None:
    """Before the start the seat is freed; after it the seat is marked away, and the
    service's bot plays it until the player joins again."""
    state, seat = await _seat_of(backend, table_id, player)
    if state.status == "closed":
        raise ApiError("table_closed", f"Table {table_id} is finished.")
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
        raise ApiError("unknown_table", f"There is no table {table_id}.")


def _nonce() -> str:
    return secrets.token_hex(4)


# ---------------------------------------------------------------- playing


async def play(backend: Backend, table_id: str, player: str, client_id: str, command: dict[str, Any],
               noted: dict[str, Any] | None = None) -> int:
    """A player's command, in the hand-file format without ``seat`` (the caller's). The
    store's command id is the player's id with the client's, so two players' ids never
    meet; the same id again answers as the first time and changes nothing but the
    service's steps it made due, if they are still untaken."""
    state, seat = await _seat_of(backend, table_id, player)
    if noted is not None:
        noted["seat"] = seat  # for the command's log line
    given = command.get("seat", seat)
    if given != seat:
        raise ApiError("not_your_seat", f"Seat {given} is not yours; yours is {seat}.")
    game = state.game
    submission = submission_from_wire({**command, "seat": seat}, player, game.name)
    if not isinstance(submission.command, game.command_types):
        raise ApiError("malformed_command", f"{command.get('type')!r} is not a command of a {game.name} hand.")
    result = await backend.submit(table_id, submission, f"{player}:{client_id}")
    after = result.state
    if after is None:
        after, _ = await backend.state(table_id)
    # A duplicate too: whoever appended it first may have died (or lost Redis) before
    # taking the steps it made due, and only this retry is left to take them.
    await service_steps(backend, table_id, after)
    return result.version


# ---------------------------------------------------------------- quickplay and rematch


async def quickplay(backend: Backend, player: str, game: str, wait_seconds: float) -> tuple[str, int]:
    """Seat the player at the game's waiting quickplay table (a new one if none has a
    free seat); wait for others up to ``wait_seconds``, then give the free seats bots."""
    for _ in range(5):
        candidate = new_table_id()
        table_id = await backend.claim(f"quickplay:{game}", candidate, ttl_s=120)
        if table_id == candidate:
            await create_table(backend, player, NewTable(game=game, name=QUICKPLAY_NAME, seat=None),
                               table_id=table_id)
        state, _ = await backend.state(table_id)
        if state.status == "new":  # the claimant has not created it yet
            await asyncio.sleep(0.05)
            state, _ = await backend.state(table_id)
        try:
            seat = await join(backend, table_id, player, None)
        except ApiError as error:
            if error.code in ("table_full", "table_started", "table_closed", "unknown_table"):
                await backend.release(f"quickplay:{game}", table_id)
                continue
            raise
        deadline = time.monotonic() + wait_seconds
        while time.monotonic() < deadline:
            state, _ = await backend.state(table_id)
            if state.status != "open":
                return table_id, seat
            await asyncio.sleep(0.2)
        await backend.release(f"quickplay:{game}", table_id)
        await fill_with_bots(backend, table_id)
        return table_id, seat
    raise ApiError("unavailable", "No quickplay table could be had; try again.")


async def fill_with_bots(backend: Backend, table_id: str, level: str = "beginner") -> None:
    state, _ = await backend.state(table_id)
    for seat, holder in enumerate(state.seats):
        if holder is not None or state.status != "open":
            continue
        bot = await backend.create_player(f"{level} bot", bot=level)
        try:
            state = await send(backend, table_id, Submission(JoinSeat(seat=seat), bot.player), f"bot-{seat}")
        except MightyError as error:
            if error.code not in ("seat_taken", "wrong_phase", "command_id_reused"):
                raise
            state, _ = await backend.state(table_id)
    await service_steps(backend, table_id, state)


async def rematch(backend: Backend, table_id: str, player: str) -> Table:
    """The same game and options, match and bots; the first caller creates it, later
    callers get the same table, each seated where they sat."""
    entry = await backend.entry(table_id, fresh=True)
    if entry is None:
        raise ApiError("unknown_table", f"There is no table {table_id}.")
    candidate = new_table_id()
    chosen = await backend.claim(f"rematch:{table_id}", candidate, ttl_s=7 * 24 * 3600)
    old_seat = entry.seats.index(player) if player in entry.seats else None
    if chosen == candidate:
        body = NewTable(game=game_of_entry(entry),
                        options=options_of_entry(entry),
                        name=entry.name, hands=entry.hands, turn_seconds=entry.turn_seconds,
                        seat=old_seat, bots=dict(entry.bots))
        return await create_table(backend, player, body, table_id=chosen)
    for _ in range(50):  # the first caller may still be creating it
        state, _ = await backend.state(chosen)
        if state.status != "new":
            break
        await asyncio.sleep(0.05)
    if old_seat is not None:
        try:
            await join(backend, chosen, player, old_seat)
        except ApiError as error:
            if error.code not in ("seat_taken", "table_started", "table_closed", "already_seated"):
                raise
        except MightyError as error:
            if error.code != "seat_taken":
                raise
    return await fresh_table(backend, chosen)

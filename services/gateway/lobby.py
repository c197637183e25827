"""What the service does around a table, over the ``Backend``: create it with its bots,
seat and unseat players, start it when every seat is taken, deal each hand, play a
player's command, quickplay and rematch (docs/api.md, "The lobby" and "Playing").

Every command the service sends itself has an id that any gateway would give it (the
start, ``deal-<n>``, ``bot-<seat>``), so two gateways doing the same step at once append
it once: the second is answered as a duplicate or refused by the first's effect.
"""

from __future__ import annotations

import asyncio
import random
import re
import secrets
import time
from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any

import msgspec
import structlog

from domain.bots import bot_name
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
from services.gateway.invites import invite_code, invite_hash
from services.gateway.wire import NewTable, Seat, Table
from services.store.errors import VersionConflict

log = structlog.get_logger("mighty.gateway")

# A seat as a ``bots`` key: decimal ASCII, no leading zero (one spelling per seat)
_SEAT_KEY = re.compile(r"0|[1-9][0-9]?", re.ASCII)
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
        reason=entry.reason or None, private=entry.private is True, hints=entry.hints is True,
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
    """Start a full table; deal when a hand is due (docs/rules/mighty.md §2;
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


def _check_bots(bots: dict[str, str], players: int, seat: int | None, levels: Collection[str]) -> None:
    """Every seat key and level (one the game's bots know), before anything is appended
    (a refusal half-way would leave a table behind)."""
    for key, level in bots.items():
        if not (_SEAT_KEY.fullmatch(key) and int(key) < players):
            raise ApiError("invalid_request", f"bots: {key[:8]!r} is not a seat of 0..{players - 1} "
                           "(written as 0, 1, 2, …).")
        if level not in levels:
            raise ApiError("invalid_request", f"bots: {level[:24]!r} is not a bot level: {', '.join(levels)}.")
        if seat is not None and int(key) == seat:
            raise ApiError("seat_taken", f"Seat {seat} is given to a bot and to you.")
    if seat is not None and seat >= players:
        raise ApiError("invalid_request", f"Seat {seat} is not a seat of 0..{players - 1}.")


async def create_table(backend: Backend, player: str, body: NewTable, table_id: str | None = None) -> Table:
    try:
        rules = game_named(body.game).make_rules(body.game, body.options)
    except MightyError as error:
        raise ApiError("invalid_request", error.message) from None
    game = game_of(rules)
    players = game.players(rules)
    _check_bots(body.bots, players, body.seat, game.bots().keys())
    # every table ends (services/gateway/lifecycle.py): a bounded match, a turn that times out
    hands, turn_seconds = backend.lifecycle.match(body.hands, body.turn_seconds,
                                                  bots_only=body.seat is None and len(body.bots) >= players)
    table_id = table_id or new_table_id()
    invite = invite_hash(invite_code(await backend.secret(), table_id)) if body.private else ""
    create = CreateTable(variant=body.game, options=body.options, name=body.name or table_id,
                         hands=hands, turn_seconds=turn_seconds, bots=dict(body.bots),
                         created=now_iso(), private=body.private, invite_hash=invite, rated=body.rated,
                         min_reputation=body.min_reputation, hints=body.hints)
    state = await send(backend, table_id, Submission(create, player), "create")
    for key, level in sorted(body.bots.items()):
        bot = await backend.create_player(bot_name(level, table_id, int(key)), bot=level)
        state = await send(backend, table_id, Submission(JoinSeat(seat=int(key)), bot.player), f"bot-{key}")
    if body.seat is not None:
        state = await send(backend, table_id, Submission(JoinSeat(seat=body.seat), player), f"join-{player}")
    state = await service_steps(backend, table_id, state)
    await backend.touch(table_id, state.status)  # a person made it: not idle yet
    return await fresh_table(backend, table_id)


async def _check_reputation(backend: Backend, player: str, least: int) -> None:
    """A table's creator asked for players who finish their hands (docs/ratings.md,
    "Reputation"): the share of the player's hands they finished, in percent (a player
    with none yet passes)."""
    _, reputation = await backend.player_ratings(player)
    if reputation is None or reputation.finished + reputation.abandoned == 0:
        return
    share = 100 * reputation.finished // (reputation.finished + reputation.abandoned)
    if share < least:
        raise ApiError("reputation_too_low", f"This table asks for players who finished {least}% of their hands; "
                       f"you finished {share}%.")


async def join(backend: Backend, table_id: str, player: str, seat: int | None) -> int:
    state, _ = await backend.state(table_id)
    _exists(state, table_id)
    if player in state.seats:  # joining again: the same seat; back from away if so
        mine = state.seats.index(player)
        if seat is not None and seat != mine:
            raise ApiError("already_seated", f"You hold seat {mine} at this table.")
        await back(backend, table_id, player, state)
        state = await service_steps(backend, table_id, state)  # a join retried: its start may be untaken
        await backend.touch(table_id, state.status)
        return mine
    if state.status == "closed":
        raise ApiError("table_closed", f"Table {table_id} is finished.")
    if state.status == "playing":
        raise ApiError("table_started", f"Table {table_id} has started; its seats are fixed.")
    if seat is not None and seat >= len(state.seats):
        raise ApiError("invalid_request", f"Seat {seat} is not a seat of 0..{len(state.seats) - 1}.")
    if state.min_reputation:
        await _check_reputation(backend, player, state.min_reputation)
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
            if error.code == "already_seated":  # this player's other request (a retry) sat first
                state, _ = await backend.state(table_id)
                if player in state.seats and (seat is None or state.seats.index(player) == seat):
                    return state.seats.index(player)
            if error.code == "wrong_phase":
                raise ApiError("table_started", f"Table {table_id} has started; its seats are fixed.") from None
            raise
        state = await service_steps(backend, table_id, state)
        await backend.touch(table_id, state.status)
        return chosen
    raise ApiError("table_full", f"Every seat of table {table_id} is taken.")


async def back(backend: Backend, table_id: str, player: str, state: TableState) -> None:
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
    await backend.touch(table_id, after.status)  # a person acted
    # they are there: a seat whose stream was open once is not sent away while its player
    # acts over HTTP (one who never opened a stream has no record: presence.py)
    await backend.here(table_id, player, known_only=True)
    return result.version


# ---------------------------------------------------------------- quickplay and rematch


QUICKPLAY_SEATING_S = 20.0  # how long a quickplay may take to be seated, contention included


async def quickplay(backend: Backend, player: str, game: str, wait_seconds: float) -> tuple[str, int]:
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
    seating, token = f"quickplay-seating:{game}:{player}", _nonce()
    while await backend.claim(seating, token, ttl_s=int(QUICKPLAY_SEATING_S) + 10) != token:
        if time.monotonic() - started > QUICKPLAY_SEATING_S:
            raise ApiError("unavailable", "No quickplay table could be had; try again.")
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


async def _seated_by_another(backend: Backend, own: str, player: str) -> tuple[str, int] | None:
    """The table and seat this player's other quickplay request has seated it at."""
    waiting = await backend.claimed(own)
    if waiting is None:
        return None
    state, _ = await backend.state(waiting)
    if player in state.seats and state.status != "closed":
        return waiting, state.seats.index(player)
    return None


async def _seat_for_quickplay(backend: Backend, player: str, game: str, own: str, shared: str,
                              started: float, wait_seconds: float) -> tuple[str, int]:
    attempt = 0
    while True:
        attempt += 1
        if time.monotonic() - started > QUICKPLAY_SEATING_S:
            raise ApiError("unavailable", "No quickplay table could be had; try again.")
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
        except ApiError as error:
            if error.code not in ("table_full", "table_started", "table_closed", "unknown_table"):
                raise
            await backend.release(shared, table_id)
            await backend.release(own, table_id)
            continue
        except VersionConflict:  # many joined at once past the handler's retries: again
            continue
        return table_id, seat


async def _created(backend: Backend, table_id: str, wait_s: float = 3.0) -> TableState | None:
    """The table's state once its creator has created it (None: not within ``wait_s``)."""
    deadline = time.monotonic() + wait_s
    while True:
        state, _ = await backend.state(table_id)
        if state.status != "new":
            return state
        if time.monotonic() > deadline:
            return None
        await asyncio.sleep(0.05)


async def _wait_for_others(backend: Backend, shared: str, table_id: str, seat: int,
                           deadline: float) -> tuple[str, int]:
    while time.monotonic() < deadline:
        state, _ = await backend.state(table_id)
        if state.status != "open":
            return table_id, seat
        await asyncio.sleep(0.2)
    await backend.release(shared, table_id)
    await fill_with_bots(backend, table_id)
    return table_id, seat


async def fill_with_bots(backend: Backend, table_id: str, level: str = "beginner") -> None:
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
    await service_steps(backend, table_id, state)


def _rematch_seats(entry: DirectoryEntry) -> dict[str, int]:
    """The people seated at a table (not its bots), by the seat each held."""
    return {p: seat for seat, p in enumerate(entry.seats) if p is not None and str(seat) not in entry.bots}


async def kept_seat(backend: Backend, table_id: str, player: str, seat: int | None) -> int | None:
    """A rematch's seats are kept for the players of the match it follows: the seat a
    joining player must take there (None: the table is no rematch, any seat will do);
    403 ``not_your_seat`` for anyone else, or for another seat."""
    held = await backend.claimed(f"rematch-seats:{table_id}")
    if held is None:
        return None
    kept: dict[str, int] = msgspec.json.decode(held)
    if player not in kept:
        raise ApiError("not_your_seat", f"Table {table_id} is a rematch: its seats are kept for the "
                       "players of the match before it.")
    if seat is not None and seat != kept[player]:
        raise ApiError("not_your_seat", f"Seat {seat} is kept for another player; yours is {kept[player]}.")
    return kept[player]


async def rematch(backend: Backend, table_id: str, player: str) -> Table:
    """The same game and options, match and bots; the first caller creates it, later
    callers get the same table, each seated where they sat. Only the players seated at
    the table may ask (403 ``not_your_seat``), and its seats are kept for them."""
    entry = await backend.entry(table_id, fresh=True)
    if entry is None:
        raise ApiError("unknown_table", f"There is no table {table_id}.")
    people = _rematch_seats(entry)
    if player not in people:
        raise ApiError("not_your_seat", f"You held no seat at table {table_id}: only its players may ask "
                       "for a rematch.")
    candidate = new_table_id()
    chosen = await backend.claim(f"rematch:{table_id}", candidate, ttl_s=7 * 24 * 3600)
    old_seat = people[player]
    if chosen == candidate:
        hands, turn_seconds = backend.lifecycle.carried(entry.hands, entry.turn_seconds)
        # the seats are kept before the table exists: no stranger can take one first
        await backend.claim(f"rematch-seats:{chosen}", msgspec.json.encode(people).decode(), ttl_s=7 * 24 * 3600)
        body = NewTable(game=game_of_entry(entry),
                        options=options_of_entry(entry),
                        name=entry.name, hands=hands, turn_seconds=turn_seconds,
                        seat=old_seat, bots=dict(entry.bots), private=entry.private is True,
                        # a learners' table stays one (and so unrated, as hints need)
                        hints=entry.hints is True, rated=entry.hints is not True)
        return await create_table(backend, player, body, table_id=chosen)
    for _ in range(50):  # the first caller may still be creating it
        state, _ = await backend.state(chosen)
        if state.status != "new":
            break
        await asyncio.sleep(0.05)
    try:
        await join(backend, chosen, player, old_seat)
    except ApiError as error:
        if error.code not in ("seat_taken", "table_started", "table_closed", "already_seated"):
            raise
    except MightyError as error:
        if error.code != "seat_taken":
            raise
    return await fresh_table(backend, chosen)

"""A table: created with its bots (and its creator seated, if asked), and shown as the
API shows it (docs/api.md, "The lobby").

Every command the service sends itself has an id that any gateway would give it (the
create, ``bot-<seat>``, the start, ``deal-<n>``), so two gateways doing the same step at
once append it once: the second is answered as a duplicate or refused by the first's
effect.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any

from domain.bots import bot_name
from domain.errors import MightyError
from domain.games import Rules
from domain.registry import game_named, game_of, rules_of_directory
from domain.table import CreateTable, JoinSeat, Submission
from projections.directory import DirectoryEntry, game_fields
from services.app.errors import Refused
from services.app.invites import invite_code, invite_hash
from services.app.ports import PlayerRecord, Tables
from services.app.steps import send, service_steps_async
from services.gateway.wire import NewTable, Seat, Table

# A seat as a ``bots`` key: decimal ASCII, no leading zero (one spelling per seat)
_SEAT_KEY = re.compile(r"0|[1-9][0-9]?", re.ASCII)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def new_table_id() -> str:
    return "t" + secrets.token_hex(6)


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


async def table_of(backend: Tables, entry: DirectoryEntry) -> Table:
    names = await backend.players([p for p in entry.seats if p is not None])
    return _table(entry, names)


async def tables_of(backend: Tables, entries: list[DirectoryEntry]) -> list[Table]:
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


async def fresh_table(backend: Tables, table_id: str) -> Table:
    """The table as its stream says now (after a change the caller made: the directory
    may not show it yet)."""
    entry = await backend.entry(table_id, fresh=True)
    if entry is None:
        raise Refused("unknown_table", f"There is no table {table_id}.")
    return await table_of(backend, entry)


def _check_bots(bots: dict[str, str], players: int, seat: int | None, levels: Collection[str]) -> None:
    """Every seat key and level (one the game's bots know), before anything is appended
    (a refusal half-way would leave a table behind)."""
    for key, level in bots.items():
        if not (_SEAT_KEY.fullmatch(key) and int(key) < players):
            raise Refused("invalid_request", f"bots: {key[:8]!r} is not a seat of 0..{players - 1} "
                          "(written as 0, 1, 2, …).")
        if level not in levels:
            raise Refused("invalid_request", f"bots: {level[:24]!r} is not a bot level: {', '.join(levels)}.")
        if seat is not None and int(key) == seat:
            raise Refused("seat_taken", f"Seat {seat} is given to a bot and to you.")
    if seat is not None and seat >= players:
        raise Refused("invalid_request", f"Seat {seat} is not a seat of 0..{players - 1}.")


async def create_table(backend: Tables, player: str, body: NewTable, table_id: str | None = None) -> Table:
    try:
        rules = game_named(body.game).make_rules(body.game, body.options)
    except MightyError as error:
        raise Refused("invalid_request", error.message) from None
    game = game_of(rules)
    players = game.players(rules)
    _check_bots(body.bots, players, body.seat, game.bots().keys())
    # every table ends (services/app/lifecycle.py): a bounded match, a turn that times out
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
    state = await service_steps_async(backend, table_id, state)
    await backend.touch(table_id, state.status)  # a person made it: not idle yet
    return await fresh_table(backend, table_id)

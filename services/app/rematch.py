"""A rematch (docs/api.md, "The lobby"): the same game and options, match and bots, its
seats kept for the players of the table before."""

from __future__ import annotations

import asyncio

import msgspec

from domain.errors import MightyError
from projections.directory import DirectoryEntry
from services.app.errors import Refused
from services.app.ports import Tables
from services.app.seats import join
from services.app.tables import (
    create_table,
    fresh_table,
    game_of_entry,
    new_table_id,
    options_of_entry,
)
from services.gateway.wire import NewTable, Table


def _rematch_seats(entry: DirectoryEntry) -> dict[str, int]:
    """The people seated at a table (not its bots), by the seat each held."""
    return {p: seat for seat, p in enumerate(entry.seats) if p is not None and str(seat) not in entry.bots}


async def rematch(backend: Tables, table_id: str, player: str) -> Table:
    """The same game and options, match and bots; the first caller creates it, later
    callers get the same table, each seated where they sat. Only the players seated at
    the table may ask (403 ``not_your_seat``), and its seats are kept for them."""
    entry = await backend.entry(table_id, fresh=True)
    if entry is None:
        raise Refused("unknown_table", f"There is no table {table_id}.")
    people = _rematch_seats(entry)
    if player not in people:
        raise Refused("not_your_seat", f"You held no seat at table {table_id}: only its players may ask "
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
    except Refused as error:
        if error.code not in ("seat_taken", "table_started", "table_closed", "already_seated"):
            raise
    except MightyError as error:
        if error.code != "seat_taken":
            raise
    return await fresh_table(backend, chosen)

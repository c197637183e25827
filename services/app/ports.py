"""What the use cases need of the stores (``Tables``), the port the application layer
(``services/app/``) is written against. The gateway's ``Backend``
(services/gateway/backend.py) is this port and more (sockets, quotas, accounts, chat,
the operations' reads); ``RedisBackend`` implements both over the async command path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import msgspec

from domain.table import Submission, TableEvent, TableState
from projections.directory import DirectoryEntry
from projections.ratings import PlayerRating, Reputation
from services.app.lifecycle import Lifecycle


class PlayerRecord(msgspec.Struct, frozen=True):
    player: str
    name: str
    bot: str | None = None  # a bot's level; None for a person
    lang: str | None = None  # the player's language setting (docs/i18n.md); None: not set


class Submitted(msgspec.Struct, frozen=True):
    """What a command did: the table's version after it, its events, whether the command
    id had been handled before (then nothing was written now), and the state after."""

    version: int
    events: tuple[TableEvent, ...]
    duplicate: bool
    state: TableState | None


class Tables(Protocol):
    """The command path, the tables' states and lobby entries, the players, and the
    claims that make a step happen once among many gateways."""

    lifecycle: Lifecycle  # a new table's bounds, idle times (services/app/lifecycle.py)

    async def touch(self, table_id: str, status: str) -> None:
        """A person acts at or watches the table (of ``status``): it is not idle
        (services/gateway/presence.py); never raises."""
        ...

    async def here(self, table_id: str, player: str, *, known_only: bool = False, leaving: bool = False) -> None:
        """The player is connected to the table now (``known_only``: only if a stream of
        theirs was, before; ``leaving``: the last stamp of a stream closing): the record a
        seat is sent away by when it grows old (services/gateway/presence.py,
        services/bots/gone.py); never raises."""
        ...

    async def secret(self) -> bytes:
        """The token secret every gateway of the deployment shares."""
        ...

    async def create_player(self, name: str, bot: str | None = None) -> PlayerRecord: ...

    async def players(self, ids: Sequence[str]) -> dict[str, PlayerRecord]: ...

    async def player_ratings(self, player: str) -> tuple[dict[str, PlayerRating], Reputation | None]:
        """The player's rating per rule set they were rated in, and their reputation
        (docs/ratings.md)."""
        ...

    async def submit(self, table_id: str, submission: Submission, command_id: str) -> Submitted: ...

    async def state(self, table_id: str) -> tuple[TableState, int]:
        """The table's state and version, caught up from its stream (status "new": none)."""
        ...

    def cached(self, table_id: str) -> tuple[TableState, int] | None:
        """The table's state and version as this process last saw them, with no I/O (may
        be behind the store; None when not cached)."""
        ...

    async def entry(self, table_id: str, *, fresh: bool = False) -> DirectoryEntry | None:
        """The table's lobby entry: the directory's, else (or when ``fresh``) folded from
        its stream (a change the directory may not show yet); None for no such table."""
        ...

    async def claim(self, key: str, value: str, ttl_s: int) -> str:
        """Set ``key`` to ``value`` unless it is set; answer what it holds (a rematch's
        table: the first caller's wins)."""
        ...

    async def release(self, key: str, value: str) -> None:
        """Unset a claimed ``key`` if it still holds ``value``."""
        ...

    async def claimed(self, key: str) -> str | None:
        """What a claimed ``key`` holds (None: unclaimed)."""
        ...

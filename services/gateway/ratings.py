"""The ratings' routes (docs/ratings.md, docs/api.md "Players", "Leaderboards"): a
player's ratings per rule set and reputation, added to ``GET /players/{player}``, and
``GET /leaderboards/{game}``. They read what the rater stored
(``services/projection/rater.py``); nothing here computes a rating."""

from __future__ import annotations

from typing import Annotated, Any, Final

import msgspec
from litestar import Controller, get
from litestar.params import FromPath, QueryParameter

from projections.ratings import PlayerRating, Reputation
from services.gateway import labels
from services.gateway.deps import BackendDep, SettingsDep
from services.gateway.errors import ApiError
from services.gateway.wire import RatingOut, ReputationOut

MAX_LIMIT: Final = 100
DEFAULT_LIMIT: Final = 50
DAY_MS: Final = 86_400_000


class BoardRow(msgspec.Struct, frozen=True):
    rank: int
    player: str
    name: str | None  # None: the player's record has gone (a guest unused for a month)
    ordinal: float
    mu: float
    sigma: float
    hands: int


class Leaderboard(msgspec.Struct, frozen=True):
    game: str
    players: list[BoardRow]


def _round(x: float) -> float:
    return round(x, 3)


def rating_out(rating: PlayerRating) -> RatingOut:
    return RatingOut(mu=_round(rating.mu), sigma=_round(rating.sigma), ordinal=_round(rating.ordinal),
                     hands=rating.hands, provisional=rating.provisional,
                     history=[(at_ms, _round(ordinal)) for at_ms, ordinal in rating.history])


def reputation_out(reputation: Reputation | None) -> ReputationOut:
    return ReputationOut() if reputation is None else ReputationOut(reputation.finished, reputation.abandoned)


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise ApiError("invalid_request", f"limit is a whole number of 1..{MAX_LIMIT}.")
    return limit


def _name(player: str, names: dict[str, Any]) -> str | None:
    if player.startswith("bot:"):
        return player[len("bot:"):]  # a bot level is its own name (the clients translate it)
    found = names.get(player)
    return None if found is None else str(found.name)


class LeaderboardsController(Controller):
    """A rule set's best rated players (docs/ratings.md)."""

    path = "/leaderboards"

    @get("/{game:str}", summary="A rule set's best rated players")
    async def get_leaderboard(
        self,
        backend: BackendDep,
        settings: SettingsDep,
        game: FromPath[str],
        limit: Annotated[int, QueryParameter(description=f"players at most (1..{MAX_LIMIT})")] = DEFAULT_LIMIT,
    ) -> Leaderboard:
        if len(game) > 32 or labels.game_for(game) is None:
            raise ApiError("not_found", f"There is no game {game[:32]!r}.")
        check_limit(limit)
        now_ms = await backend.server_ms()
        rows = await backend.leaderboard(game, limit, min_hands=settings.ratings_min_hands,
                                         since_ms=now_ms - settings.ratings_recent_days * DAY_MS)
        names = await backend.players([r.player for r in rows if not r.player.startswith("bot:")])
        return Leaderboard(game=game, players=[
            BoardRow(rank=i, player=r.player, name=_name(r.player, names), ordinal=_round(r.ordinal),
                     mu=_round(r.mu), sigma=_round(r.sigma), hands=r.hands)
            for i, r in enumerate(rows, start=1)])

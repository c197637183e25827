"""The terminal client's leaderboard, driven by Textual's pilot at 80×24 against a gateway
played by ``httpx.MockTransport`` (docs/api.md "Leaderboards", docs/terminal.md): opened
from the lobby by a key, a rule set's players best first, every name as written (cut with
an ellipsis when long), a bot named by its level, another game from the screen, and no
column cut at 80 columns in any of the six languages."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.cells import cell_len
from textual.widgets import DataTable, Select, Static

from clients.terminal import session
from clients.terminal.api import Api
from clients.terminal.app import PlayApp
from clients.terminal.catalog import LANGS, t, use
from clients.terminal.dialogs import Choose
from clients.terminal.leaderboard import LeaderboardScreen, player_width
from clients.terminal.lobby import LobbyScreen
from tests.fixtures.hostile_names import HOSTILE_NAMES
from tests.unit.terminal_tables import catalogue
from tests.unit.test_terminal_accounts_chat import until

URL = "http://gateway.test"
LONG = "長い名前の人" * 4  # 24 characters (the most a name has), 48 columns


def board(game: str) -> list[dict[str, Any]]:
    """``GET /leaderboards/{game}``'s players: every hostile name, a long one, a bot."""
    if game == "mitigati":
        return []
    names = [*HOSTILE_NAMES, LONG]
    players = [{"player": f"p{i}", "name": name, "ordinal": 20.5 - i, "mu": 30.25 - i / 10, "sigma": 3.21,
                "hands": 120 + i} for i, name in enumerate(names)]
    players.insert(3, {"player": "bot:expert", "name": "expert", "ordinal": 18.0, "mu": 27.5, "sigma": 3.1,
                       "hands": 1234})
    for rank, row in enumerate(players, start=1):
        row["rank"] = rank
    return players


class Gateway:
    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.asked: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/api/v1")
        if path == "/games":
            return httpx.Response(200, json={"games": catalogue(self.lang)})
        if path == "/tables":
            return httpx.Response(200, json={"tables": []})
        if path.startswith("/leaderboards/"):
            game = path.removeprefix("/leaderboards/")
            self.asked.append(game)
            assert request.url.params.get("limit") == "50"
            return httpx.Response(200, json={"game": game, "players": board(game)})
        return httpx.Response(404, json={"code": "not_found", "message": path})


def a_client(tmp_path: Path, gateway: Gateway, lang: str) -> PlayApp:
    config = tmp_path / "play.json"
    session.save(config, URL, {"player": "p-guest", "name": "Gus", "token": "guest-token"})
    app = PlayApp(URL, config=config, lang=lang)
    app.api = Api(URL, transport=httpx.MockTransport(gateway), lang=lang)
    return app


def cells(table: DataTable[Any], column: int) -> list[str]:
    return [str(table.get_row_at(row)[column]) for row in range(table.row_count)]


@pytest.mark.parametrize("lang", LANGS)
def test_the_leaderboard_opens_from_the_lobby_fits_80_columns_and_shows_names_as_written(
        tmp_path: Path, lang: str) -> None:
    gateway = Gateway(lang)
    app = a_client(tmp_path, gateway, lang)

    async def drive() -> None:
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            await pilot.press("l")  # no game filter: the game is asked for
            await until(pilot, lambda: isinstance(app.screen, Choose), "the choice of game")
            await pilot.press(*"mighty-5", "enter")
            await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen), "the leaderboard")
            screen = app.screen
            table = screen.query_one("#board", DataTable)
            expected = board("mighty-5")
            await until(pilot, lambda: table.row_count == len(expected), "the players")
            await pilot.pause()
            assert gateway.asked == ["mighty-5"]
            assert cells(table, 0) == [str(r["rank"]) for r in expected]
            names = cells(table, 1)
            for row, shown in zip(expected, names, strict=True):
                if row["player"] == "bot:expert":
                    assert shown == t("terminal.board.bot", name="expert")
                elif cell_len(row["name"]) > player_width(80):  # cut to fit, an ellipsis where
                    assert shown.endswith("…") and row["name"].startswith(shown[:-1].rstrip())
                    assert player_width(80) - 1 <= cell_len(shown) <= player_width(80)
                else:
                    assert shown == row["name"]  # markup, entities, braces: as written
            assert cells(table, 2)[:2] == ["20.50", "19.50"] and cells(table, 5)[3] == "1234"
            # every column whole at 80 columns: nothing to scroll sideways, headers included
            assert table.max_scroll_x == 0, (lang, table.virtual_size.width, table.size.width)
            headers = [str(c.label) for c in table.columns.values()]
            assert headers == [t(f"terminal.board.col.{c}") for c in
                               ("rank", "player", "rating", "mu", "sigma", "hands")]
            title = str(screen.query_one("#board_title", Static).render())
            assert title == t("terminal.board.of", game=next(g["name"] for g in catalogue(lang) if g["game"] == "mighty-5"))
            # another game, from the leaderboard itself; an empty board says so
            await pilot.press("g")
            await until(pilot, lambda: isinstance(app.screen, Choose), "the choice of game")
            await pilot.press(*"mitigati", "enter")
            await until(pilot, lambda: gateway.asked == ["mighty-5", "mitigati"], "the other board")
            await until(pilot, lambda: table.row_count == 0, "the empty board")
            await until(pilot, lambda: t("terminal.board.empty") in str(
                screen.query_one("#board_title", Static).render()), "the empty board's words")
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby again")

    try:
        asyncio.run(drive())
    finally:
        use("en")


def test_the_lobbys_game_filter_opens_its_leaderboard_at_once(tmp_path: Path) -> None:
    gateway = Gateway("en")
    app = a_client(tmp_path, gateway, "en")

    async def drive() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            lobby = app.screen
            await until(pilot, lambda: bool(lobby.query_one("#game").is_mounted), "the filters")
            lobby.query_one("#game", Select).value = "mitigati"
            await pilot.pause()
            await pilot.press("l")
            await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen), "the leaderboard")
            await until(pilot, lambda: gateway.asked == ["mitigati"], "the filter's board")

    asyncio.run(drive())


def test_the_leaderboard_route_is_called_as_the_api_says() -> None:
    seen: list[httpx.URL] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        return httpx.Response(200, json={"game": "mighty-5", "players": json.loads(json.dumps(board("mighty-5")))})

    async def call() -> list[dict[str, Any]]:
        api = Api(URL, transport=httpx.MockTransport(answer))
        try:
            return await api.leaderboard("mighty-5")
        finally:
            await api.close()

    players = asyncio.run(call())
    assert [p["player"] for p in players][:4] == ["p0", "p1", "p2", "bot:expert"]
    assert seen[0].path == "/api/v1/leaderboards/mighty-5" and seen[0].params.get("limit") == "50"

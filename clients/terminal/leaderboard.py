"""A rule set's leaderboard (``GET /leaderboards/{game}``, docs/api.md "Leaderboards";
docs/ratings.md): its rated players, best ordinal first, with their rank, rating (the
ordinal), mu, sigma and rated hands. Opened from the lobby (``l``), another game with
``g``; the columns fit 80 columns, a long name cut with an ellipsis."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from clients.terminal.api import ApiError
from clients.terminal.cards import deck, decks
from clients.terminal.catalog import say_bindings, t
from clients.terminal.dialogs import Choose
from clients.terminal.literal import literal, tell
from clients.terminal.lobby import cut

if TYPE_CHECKING:
    from clients.terminal.app import PlayApp

COLUMNS = ("rank", "player", "rating", "mu", "sigma", "hands")
# the cells every column but the player's takes at most: rank, rating, mu, sigma, hands,
# and each column's padding (one cell either side); the player gets the rest
NUMBERS = 5 + 8 + 6 + 6 + 7
PADDING = 2 * len(COLUMNS)


def player_width(width: int) -> int:
    """How wide a player's name may be in a leaderboard ``width`` columns wide (80: 33),
    beside the numbers and the scroll bar's two columns."""
    return max(10, min(40, width - NUMBERS - PADDING - 3))


def shown_name(row: dict[str, Any]) -> str:
    name = str(row.get("name") or row.get("player") or "")
    return t("terminal.board.bot", name=name) if str(row.get("player", "")).startswith("bot:") else name


def game_name(game: str) -> str:
    known = deck(game)
    return known.name if known is not None else game


class LeaderboardScreen(Screen[None]):
    DEFAULT_CSS = """
    LeaderboardScreen #board_title { padding: 0 1; }
    LeaderboardScreen #board { height: 1fr; }
    """
    BINDINGS = [
        Binding("escape", "app.pop_screen", "terminal.key.lobby"),
        Binding("g", "game", "terminal.key.board_game"),
        Binding("r", "refresh", "terminal.key.refresh"),
    ]

    def __init__(self, game: str) -> None:
        super().__init__()
        say_bindings(self)
        self.game = game
        self.rows: list[dict[str, Any]] = []

    @property
    def play_app(self) -> PlayApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="board_title")
        yield DataTable(id="board", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.title = t("terminal.board.title")
        table = self.query_one("#board", DataTable)
        for column in COLUMNS:
            table.add_column(t(f"terminal.board.col.{column}"), key=column)
        table.focus()
        self.load()

    def action_refresh(self) -> None:
        self.load()

    def action_game(self) -> None:
        games = sorted(((d.name, g) for g, d in decks().items()), key=lambda named: named[1] != self.game)
        self.app.push_screen(Choose(t("terminal.board.which"), games), self._chosen)

    def _chosen(self, game: str | None) -> None:
        if game is not None:
            self.game = game
            self.load()

    @work(exclusive=True, group="board", exit_on_error=False)
    async def load(self) -> None:
        title = self.query_one("#board_title", Static)
        title.update(literal(t("terminal.board.of", game=game_name(self.game))))
        try:
            self.rows = await self.play_app.api.leaderboard(self.game)
        except ApiError as error:
            tell(self, error.message, title=error.code, severity="error")
            return
        table = self.query_one("#board", DataTable)
        table.clear()
        wide = player_width(table.size.width or self.size.width)
        for row in self.rows:
            table.add_row(literal(str(row.get("rank", ""))), literal(cut(shown_name(row), wide)),
                          literal(f"{float(row.get('ordinal', 0.0)):.2f}"), literal(f"{float(row.get('mu', 0.0)):.1f}"),
                          literal(f"{float(row.get('sigma', 0.0)):.2f}"), literal(str(row.get("hands", 0))),
                          key=str(row.get("player")))
        if not self.rows:
            title.update(literal(t("terminal.board.of", game=game_name(self.game)) + "  ·  "
                                 + t("terminal.board.empty")))

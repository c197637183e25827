"""The lobby: the tables the directory lists (filtered by game and status), quick play,
joining, creating a table with bots, watching, and picking a finished hand to replay."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Label, Select, Static

from clients.terminal.api import ApiError
from clients.terminal.dialogs import Choose
from clients.terminal.literal import literal, tell

if TYPE_CHECKING:
    from clients.terminal.app import PlayApp

# docs/api.md: a variant of docs/rules/mighty.md §7 or mitigati, with its number of seats
GAMES = {"mighty-5": 5, "mighty-4": 4, "mighty-3": 3, "mighty-4-short": 4, "mighty-3-short": 3,
         "mighty-6": 6, "mighty-7": 7, "mighty-8": 8, "mitigati": 3}
STATUSES = ("open", "playing", "finished")
STATUS_STYLES = {"open": "bold green", "playing": "bold yellow", "finished": "dim"}


class LobbyScreen(Screen[None]):
    DEFAULT_CSS = """
    LobbyScreen #filters { height: auto; padding: 0 1; }
    LobbyScreen #filters Select { width: 30; }
    LobbyScreen #filters Label { padding: 1 1 0 2; }
    LobbyScreen #tables { height: 1fr; }
    LobbyScreen #who { padding: 0 1; }
    """
    BINDINGS = [
        Binding("q", "quickplay", "quick play"),
        Binding("c", "create", "create with bots"),
        Binding("j", "join", "join"),
        Binding("w", "watch", "watch"),
        Binding("h", "hands", "replay a hand"),
        Binding("r", "refresh", "refresh"),
        Binding("ctrl+c", "app.quit", "quit", show=False),
    ]

    @property
    def play_app(self) -> PlayApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="who")
        with Horizontal(id="filters"):
            yield Label("game")
            yield Select([(g, g) for g in GAMES], prompt="every game", id="game")
            yield Label("status")
            yield Select([(s, s) for s in STATUSES], prompt="every status", id="status")
        yield DataTable(id="tables", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Mighty — lobby"
        table = self.query_one("#tables", DataTable)
        table.add_columns("Table", "Game", "Status", "Seats", "Players", "Hands")
        table.focus()
        self.query_one("#who", Static).update(Text.assemble(
            "Playing as ", (self.play_app.player_name, "bold green"), f" at {self.play_app.api.url}"))
        self.action_refresh()
        self.set_interval(5.0, self.action_refresh)

    def on_select_changed(self, _: Select.Changed) -> None:
        self.action_refresh()

    def _filter(self, widget: str) -> str | None:
        value = self.query_one(widget, Select).value
        return value if isinstance(value, str) else None

    @work(exclusive=True, group="lobby", exit_on_error=False)
    async def action_refresh(self) -> None:
        try:
            tables = await self.play_app.api.tables(self._filter("#status"), self._filter("#game"))
        except ApiError as error:
            tell(self, error.message, title=error.code, severity="error")
            return
        listing = self.query_one("#tables", DataTable)
        keep = listing.cursor_row
        listing.clear()
        for found in sorted(tables, key=lambda t: t.get("created", ""), reverse=True):
            seats = found.get("seats") or []
            taken = sum(1 for s in seats if s.get("player"))
            names = ", ".join(s.get("name") or "·" for s in seats)
            listing.add_row(literal(found.get("name") or found["table"]), literal(found["game"]),
                            literal(found["status"], STATUS_STYLES.get(found["status"], "")),
                            literal(f"{taken}/{len(seats)}"), literal(names),
                            literal(f"{found.get('hands_played', 0)}/{found.get('hands')}"), key=found["table"])
        if listing.row_count:
            listing.move_cursor(row=min(keep, listing.row_count - 1))

    def _selected(self) -> str | None:
        listing = self.query_one("#tables", DataTable)
        if not listing.row_count:
            tell(self, "No table is selected.", severity="warning")
            return None
        key = listing.coordinate_to_cell_key(listing.cursor_coordinate).row_key
        return str(key.value)

    def _game(self) -> str:
        return self._filter("#game") or "mighty-5"

    def action_quickplay(self) -> None:
        first = self._game()
        games = [first, *(g for g in GAMES if g != first)]
        self.app.push_screen(Choose("Quick play: which game? (enter: the first)", [(g, g) for g in games]),
                             self._quickplay)

    def _quickplay(self, game: str | None) -> None:
        if game is not None:
            self.quickplay(game)

    @work(exclusive=True, group="seat", exit_on_error=False)
    async def quickplay(self, game: str) -> None:
        tell(self, f"Looking for a {game} table (bots fill the seats after {self.play_app.wait_seconds:g} s)…")
        try:
            seated = await self.play_app.api.quickplay(game, self.play_app.wait_seconds)
        except ApiError as error:
            tell(self, error.message, title=error.code, severity="error")
            return
        self.play_app.open_table(seated["table"], int(seated["seat"]))

    def action_create(self) -> None:
        self.app.push_screen(Choose("Create a table with bots: which game?", [(g, g) for g in GAMES]),
                             self._create)

    def _create(self, game: str | None) -> None:
        if game is not None:
            self.create(game)

    @work(exclusive=True, group="seat", exit_on_error=False)
    async def create(self, game: str) -> None:
        bots = {str(s): "beginner" for s in range(1, GAMES[game])}
        try:
            made = await self.play_app.api.create_table(game, seat=0, bots=bots)
        except ApiError as error:
            tell(self, error.message, title=error.code, severity="error")
            return
        self.play_app.open_table(made["table"], 0)

    @work(exclusive=True, group="seat", exit_on_error=False)
    async def action_join(self) -> None:
        table = self._selected()
        if table is None:
            return
        try:  # joining a table you sit at gives your seat back (and ends being away)
            seat = await self.play_app.api.join(table)
        except ApiError as error:
            tell(self, error.message, title=error.code, severity="error")
            return
        self.play_app.open_table(table, seat)

    def action_watch(self) -> None:
        table = self._selected()
        if table is not None:
            self.play_app.open_table(table, None)

    def action_hands(self) -> None:
        table = self._selected()
        if table is not None:
            self.play_app.choose_replay(table, None)


def seat_of(found: dict[str, Any], player: str | None) -> int | None:
    return next((s["seat"] for s in found.get("seats") or () if player and s.get("player") == player), None)

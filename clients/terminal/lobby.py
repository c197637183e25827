"""The lobby: the tables the directory lists (filtered by game and status), quick play,
joining, creating a table with bots, watching, picking a finished hand to replay, and a
rule set's leaderboard."""

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
from clients.terminal.cards import deck, decks
from clients.terminal.catalog import say_bindings, t
from clients.terminal.dialogs import Choose, LogIn
from clients.terminal.literal import literal, tell

if TYPE_CHECKING:
    from clients.terminal.app import PlayApp

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
        Binding("q", "quickplay", "terminal.key.quickplay"),
        Binding("c", "create", "terminal.key.create"),
        Binding("j", "join", "terminal.key.join"),
        Binding("w", "watch", "terminal.key.watch"),
        Binding("h", "hands", "terminal.key.replay"),
        Binding("l", "leaderboard", "terminal.key.leaderboard"),
        Binding("r", "refresh", "terminal.key.refresh"),
        Binding("a", "log_in", "terminal.key.log_in"),
        Binding("o", "log_out", "terminal.key.log_out"),
        Binding("ctrl+c", "app.quit", "terminal.key.quit", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        say_bindings(self)

    @property
    def play_app(self) -> PlayApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="who")
        with Horizontal(id="filters"):
            yield Label(t("terminal.lobby.game"))
            yield Select([(literal(d.name), g) for g, d in decks().items()], prompt=t("terminal.lobby.every_game"), id="game")
            yield Label(t("terminal.lobby.status"))
            yield Select([(t(f"web.status.{s}"), s) for s in STATUSES], prompt=t("terminal.lobby.every_status"), id="status")
        yield DataTable(id="tables", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.title = t("terminal.lobby.title")
        table = self.query_one("#tables", DataTable)
        table.add_columns(*(t(f"terminal.lobby.col.{c}") for c in ("table", "game", "status", "seats", "players",
                                                                   "hands")))
        table.focus()
        self._who()
        self.refresh_tables()
        self.set_interval(5.0, self._poll)

    def _who(self, trouble: str | None = None) -> None:
        """Who plays, where, and why the list may be old (the last refresh failed)."""
        line = Text.assemble(t("terminal.lobby.playing_as") + " ", (self.play_app.player_name, "bold green"),
                             " " + t("terminal.lobby.account" if self.play_app.account else "terminal.lobby.guest"),
                             " " + t("terminal.lobby.at", url=self.play_app.api.url))
        if trouble:
            line.append(f"  ·  {trouble}", style="yellow")
        self.query_one("#who", Static).update(line)

    def on_select_changed(self, _: Select.Changed) -> None:
        self.refresh_tables()

    def _filter(self, widget: str) -> str | None:
        value = self.query_one(widget, Select).value
        return value if isinstance(value, str) else None

    def _poll(self) -> None:
        """The list's own refresh every 5 s, while the lobby is the screen shown: a table
        or a replay on top of it polls nothing (nor toasts about the lobby)."""
        if self.app.screen is self:
            self.refresh_tables(quiet=True)

    def action_refresh(self) -> None:
        self.refresh_tables()

    @work(exclusive=True, group="lobby", exit_on_error=False)
    async def refresh_tables(self, quiet: bool = False) -> None:
        """``quiet``: a refresh nobody asked for; one that fails says so on the line
        above the list (the gateway restarting is routine), not in a toast."""
        try:
            tables = await self.play_app.api.tables(self._filter("#status"), self._filter("#game"))
        except ApiError as error:
            self._who(t("terminal.lobby.stale", message=error.message))
            if not quiet:
                tell(self, error.message, title=error.code, severity="error")
            return
        self._who()
        listing = self.query_one("#tables", DataTable)
        keep = listing.cursor_row
        listing.clear()
        wide = widths(listing.size.width or self.size.width)
        for found in sorted(tables, key=lambda t: t.get("created", ""), reverse=True):
            seats = found.get("seats") or []
            taken = sum(1 for s in seats if s.get("player"))
            names = ", ".join(s.get("name") or "·" for s in seats)
            known = deck(found["game"])
            listing.add_row(literal(cut(found.get("name") or found["table"], wide[0])),
                            literal(cut(known.name if known is not None else found["game"], wide[1])),
                            literal(t(f"web.status.{found['status']}"), STATUS_STYLES.get(found["status"], "")),
                            literal(f"{taken}/{len(seats)}"), literal(cut(names, wide[2])),
                            literal(f"{found.get('hands_played', 0)}/{found.get('hands')}"), key=found["table"])
        if listing.row_count:
            listing.move_cursor(row=min(keep, listing.row_count - 1))

    def _selected(self) -> str | None:
        listing = self.query_one("#tables", DataTable)
        if not listing.row_count:
            tell(self, t("terminal.lobby.none_selected"), severity="warning")
            return None
        key = listing.coordinate_to_cell_key(listing.cursor_coordinate).row_key
        return str(key.value)

    def _games(self) -> list[tuple[str, str]]:
        """The catalogue's games (``GET /games``) by name, the game filter's first."""
        first = self._filter("#game")
        games = [(d.name, g) for g, d in decks().items()]
        return sorted(games, key=lambda named: named[1] != first)

    def action_quickplay(self) -> None:
        self.app.push_screen(Choose(t("terminal.lobby.quick_which"), self._games()), self._quickplay)

    def _quickplay(self, game: str | None) -> None:
        if game is not None:
            self.quickplay(game)

    @work(exclusive=True, group="seat", exit_on_error=False)
    async def quickplay(self, game: str) -> None:
        known = deck(game)
        tell(self, t("terminal.lobby.looking", game=known.name if known is not None else game,
                     seconds=f"{self.play_app.wait_seconds:g}"))
        try:
            seated = await self.play_app.api.quickplay(game, self.play_app.wait_seconds)
        except ApiError as error:
            tell(self, error.message, title=error.code, severity="error")
            return
        self.play_app.open_table(seated["table"], int(seated["seat"]))

    def action_leaderboard(self) -> None:
        """A rule set's leaderboard: the game filter's, else the one picked."""
        game = self._filter("#game")
        if game is not None:
            self.play_app.open_leaderboard(game)
        else:
            self.app.push_screen(Choose(t("terminal.board.which"), self._games()), self._leaderboard)

    def _leaderboard(self, game: str | None) -> None:
        if game is not None:
            self.play_app.open_leaderboard(game)

    def action_create(self) -> None:
        self.app.push_screen(Choose(t("terminal.lobby.create_which"), self._games()), self._create)

    def _create(self, game: str | None) -> None:
        if game is not None:
            self.create(game)

    @work(exclusive=True, group="seat", exit_on_error=False)
    async def create(self, game: str) -> None:
        found = deck(game)
        bots = {str(s): "beginner" for s in range(1, found.seats if found is not None else 0)}
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

    def action_log_in(self) -> None:
        self.app.push_screen(LogIn(), self._logging_in)

    def _logging_in(self, given: tuple[str, str] | None) -> None:
        if given is not None:
            self.log_in(*given)

    @work(exclusive=True, group="account", exit_on_error=False)
    async def log_in(self, name: str, password: str) -> None:
        try:
            await self.play_app.log_in(name, password)
        except ApiError as error:  # bad_credentials, too_many_logins…: the server's sentence
            tell(self, error.message, title=error.code, severity="error")
            return
        self._who()
        tell(self, t("terminal.lobby.logged_in", name=self.play_app.player_name))

    @work(exclusive=True, group="account", exit_on_error=False)
    async def action_log_out(self) -> None:
        if not self.play_app.account:
            tell(self, t("terminal.lobby.no_account"), severity="warning")
            return
        try:
            await self.play_app.log_out()
        except ApiError as error:
            tell(self, error.message, title=error.code, severity="error")
        self._who()
        tell(self, t("terminal.lobby.logged_out", name=self.play_app.player_name))

    def action_hands(self) -> None:
        table = self._selected()
        if table is not None:
            self.play_app.choose_replay(table, None)


def widths(width: int) -> tuple[int, int, int]:
    """How wide the table's name, the game's name and the players may be in a list
    ``width`` columns wide, so that its six columns fit (80 columns: 14, 14, 20)."""
    if width >= 160:  # every name whole (a table's: 40 characters, 44 columns when wide)
        return 44, 24, width - 124
    if width >= 120:
        return 24, 20, max(28, width - 90)
    spare = max(0, width - 80)
    return 14 + spare // 4, 14 + spare // 4, 20 + spare // 2


def cut(text: str, cells: int) -> str:
    """``text`` in at most ``cells`` columns, an ellipsis where it was cut, so the lobby's
    columns fit in 80."""
    shown = Text(text)
    if shown.cell_len <= cells:
        return text
    shown.truncate(cells, overflow="ellipsis")
    return shown.plain


def seat_of(found: dict[str, Any], player: str | None) -> int | None:
    return next((s["seat"] for s in found.get("seats") or () if player and s.get("player") == player), None)

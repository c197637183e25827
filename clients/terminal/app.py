"""The ``mighty play`` application: log in as a guest, then the lobby, tables and replays."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App
from textual.binding import Binding

from clients.terminal import session
from clients.terminal.api import Api, ApiError
from clients.terminal.cards import register
from clients.terminal.catalog import say_bindings, t, use
from clients.terminal.dialogs import Choose
from clients.terminal.leaderboard import LeaderboardScreen
from clients.terminal.literal import tell
from clients.terminal.lobby import LobbyScreen, seat_of
from clients.terminal.replay import ReplayScreen
from clients.terminal.table import TableScreen


class PlayApp(App[None]):
    TITLE = "Mighty"
    BINDINGS = [Binding("ctrl+q", "quit", "terminal.key.quit")]

    def __init__(self, url: str, *, name: str | None = None, config: Path | None = None,
                 wait_seconds: float = 10.0, lang: str | None = None) -> None:
        super().__init__()
        say_bindings(self)
        use(lang)  # the client's own words: --lang, else the player's setting once known (login)
        self.lang = lang
        self.api = Api(url, lang=lang)
        self.config = config or session.default_path()
        self.wanted_name = name
        self.wait_seconds = wait_seconds
        self.player: str | None = None
        self.player_name = ""
        self.failure: str | None = None  # why the app stopped, for the command line

    def on_mount(self) -> None:
        self.login()

    async def on_unmount(self) -> None:
        await self.api.close()

    @work(exclusive=True, exit_on_error=False)
    async def login(self) -> None:
        """The stored guest of this gateway, or a new one (``--name`` always makes one)."""
        self.api.on_renewed = self._renewed
        stored = None if self.wanted_name else session.load(self.config, self.api.url)
        if stored is not None:
            self.api.token, self.api.refresh = stored["token"], stored.get("refresh")
            self.player, self.player_name = stored["player"], stored["name"]
        else:
            name = self.wanted_name or (os.environ.get("USER") or "guest")[:24]
            try:
                made = await self.api.new_player(name)
            except ApiError as error:
                self.failure = f"{error.code}: {error.message}"
                self.exit()
                return
            self.player, self.player_name = made["player"], made["name"]
            session.save(self.config, self.api.url, made)
        if self.lang is None:  # the player's own setting (docs/api.md, "Games, labels and languages"), else English
            with contextlib.suppress(ApiError):
                use((await self.api.me()).get("lang"))
        await self.read_catalogue()
        self.push_screen(LobbyScreen())

    async def read_catalogue(self) -> None:
        """The games the server plays, in the reader's words. Without it cards show by
        their names."""
        try:
            games = await self.api.games()
        except ApiError as error:
            tell(self, error.message, title=error.code, severity="warning")
            return
        register(games)

    @property
    def account(self) -> bool:
        """Whether the client plays as an account (a session to renew and to end)."""
        return self.api.refresh is not None

    def _renewed(self, made: dict[str, Any]) -> None:
        session.save(self.config, self.api.url, {**made, "refresh": self.api.refresh})

    async def log_in(self, name: str, password: str) -> None:
        """The account's session becomes the client's player; the guest played until now
        is kept, to come back to on logging out. A refusal raises ``ApiError``."""
        before = session.load(self.config, self.api.url)
        guest_token = self.api.token
        try:
            made = await self.api.log_in(name, password)
        except ApiError:
            self.api.token = guest_token
            raise
        if before is not None and "refresh" not in before:
            session.save(self.config, session.guest_key(self.api.url), before)
        session.save(self.config, self.api.url, made)
        self.player, self.player_name = made["player"], made["name"]

    async def log_out(self) -> None:
        """The account's session ends (on every gateway); the guest kept before it, if
        any, plays again, else a new guest of the account's name."""
        try:
            await self.api.log_out()
        finally:
            session.forget(self.config, self.api.url)
        guest = session.load(self.config, session.guest_key(self.api.url))
        if guest is not None:
            session.save(self.config, self.api.url, guest)
            session.forget(self.config, session.guest_key(self.api.url))
            self.api.token = guest["token"]
            self.player, self.player_name = guest["player"], guest["name"]
            return
        made = await self.api.new_player(self.player_name or "guest")
        session.save(self.config, self.api.url, made)
        self.player, self.player_name = made["player"], made["name"]

    def open_table(self, table: str, seat: int | None) -> None:
        self.push_screen(TableScreen(table, seat=seat))

    def open_leaderboard(self, game: str) -> None:
        self.push_screen(LeaderboardScreen(game))

    @work(group="replay", exit_on_error=False)
    async def choose_replay(self, table: str, seat: int | None) -> None:
        """Pick a finished hand of ``table``, then whose eyes to see it with."""
        try:
            hands = [h for h in await self.api.hands(table) if h.get("status") != "playing"]
            found = await self.api.table(table)
        except ApiError as error:
            tell(self, error.message, title=error.code, severity="error")
            return
        if not hands:
            tell(self, t("terminal.replay.none"), severity="warning")
            return
        names = [s.get("name") or "" for s in found["seats"]]
        seat = seat if seat is not None else seat_of(found, self.player)
        hand = await self.push_screen_wait(Choose(
            t("terminal.replay.which_hand"),
            [(t("terminal.result.of_hand", n=h["hand"]) + " " + ", ".join(f"{n or s} {v:+d}" for s, (n, v) in
                                                             enumerate(zip(names, h.get("scores") or (), strict=False))),
              h["hand"]) for h in hands]))
        if hand is None:
            return
        readers: list[tuple[str, Any]] = [(t("terminal.replay.spectator"), "spectator"),
                                          (t("terminal.replay.audit"), "audit")]
        if seat is not None:
            readers.insert(0, (t("terminal.replay.your_seat", n=seat), str(seat)))
        reader = await self.push_screen_wait(Choose(t("terminal.replay.as"), readers))
        if reader is None:
            return
        try:
            steps = await self.api.replay(table, int(hand), str(reader))
        except ApiError as error:
            tell(self, error.message, title=error.code, severity="error")
            return
        self.push_screen(ReplayScreen(table, int(hand), str(reader), steps, names, found.get("game")))


    @work(group="replay", exit_on_error=False)
    async def open_review(self, table: str, hand: int) -> None:
        """The review of hand ``hand`` (ended): the audit replay, every hand open."""
        try:
            found = await self.api.table(table)
            steps = await self.api.replay(table, hand, "audit")
        except ApiError as error:
            tell(self, error.message, title=error.code, severity="error")
            return
        names = [s.get("name") or "" for s in found["seats"]]
        self.push_screen(ReplayScreen(table, hand, t("terminal.replay.audit"), steps, names, found.get("game")))


def run(url: str, name: str | None, config: Path | None, wait_seconds: float,
        lang: str | None = None) -> str | None:
    """Run the client in this terminal; why it stopped, when it failed."""
    app = PlayApp(url, name=name, config=config, wait_seconds=wait_seconds, lang=lang)
    app.run()
    return app.failure

"""The terminal client's table screen on one recorded view, for the tests that look at
what it draws: a bare app that shows a ``TableScreen`` (seat 0, no stream followed) at a
terminal size, the view drawn, the pilot and the screen handed to the test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from textual.app import App
from textual.pilot import Pilot

from clients.terminal.table import TableScreen


@asynccontextmanager
async def table_screen(view: dict[str, Any], names: list[str], size: tuple[int, int] = (120, 40),
                       *, notifications: bool = False) -> AsyncIterator[tuple[Pilot[None], TableScreen]]:
    class Shown(App[None]):
        def on_mount(self) -> None:
            self.push_screen(TableScreen(view["table"], seat=0, follow=False))

    app = Shown()
    async with app.run_test(size=size, notifications=notifications) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TableScreen)
        screen.show_view(view, names)
        await pilot.pause()
        yield pilot, screen

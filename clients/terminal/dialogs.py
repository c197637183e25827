"""Small modal screens: pick one of many (commands, hands, games) with a filter, and
show a table of figures (the match ledger)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from clients.terminal.catalog import say_bindings, t
from clients.terminal.literal import literal


class Choose(ModalScreen[Any]):
    """A list of (text, value) to pick from; typing filters it. Escape picks nothing."""

    DEFAULT_CSS = """
    Choose { align: center middle; }
    Choose > Vertical { width: 80%; max-width: 90; height: 80%; border: thick $accent; background: $surface; }
    Choose Input { margin: 0 0 1 0; }
    Choose OptionList { height: 1fr; }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "terminal.key.cancel")]

    def __init__(self, title: str, choices: list[tuple[str, Any]], *, by_text: bool = False) -> None:
        """``by_text``: the filter reads the texts only (values too large to read)."""
        super().__init__()
        say_bindings(self)
        self.by_text = by_text
        self.title_text = title
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(literal(self.title_text), classes="title")
            yield Input(placeholder=t("terminal.choose.filter"), id="filter")
            yield OptionList(*self._options(""), id="choices")

    def _options(self, needle: str) -> list[Option]:
        words = needle.lower().split()
        return [Option(literal(text), id=str(i)) for i, (text, value) in enumerate(self.choices)
                if all(w in (text if self.by_text else f"{text} {value}").lower() for w in words)]

    def on_mount(self) -> None:
        listed = self.query_one("#choices", OptionList)
        if listed.option_count:
            listed.highlighted = 0  # what enter takes is marked from the start

    def on_input_changed(self, event: Input.Changed) -> None:
        listed = self.query_one("#choices", OptionList)
        listed.set_options(self._options(event.value))
        if listed.option_count:
            listed.highlighted = 0

    def on_input_submitted(self, event: Input.Submitted) -> None:
        listed = self.query_one("#choices", OptionList)
        if listed.option_count:
            option = listed.get_option_at_index(listed.highlighted or 0)
            self.dismiss(self.choices[int(option.id or 0)][1])

    def on_key(self, event: Any) -> None:
        typed = self.query_one("#filter", Input)
        listed = self.query_one("#choices", OptionList)
        if event.key == "down" and typed.has_focus:
            listed.focus()  # on the option marked: the next ↓ moves on
            event.stop()
        elif event.key == "up" and listed.has_focus and not listed.highlighted:
            typed.focus()
            event.stop()
        elif listed.has_focus and event.is_printable and event.character:
            typed.focus()  # typing in the list goes on filtering
            typed.insert_text_at_cursor(event.character)
            event.stop()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.choices[int(event.option.id or 0)][1])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class Figures(ModalScreen[None]):
    """A read-only table (the ledger): escape or enter closes it."""

    DEFAULT_CSS = """
    Figures { align: center middle; }
    Figures > Vertical { width: 90%; height: 80%; border: thick $accent; background: $surface; }
    """
    BINDINGS = [Binding("escape,enter,q", "close", "terminal.key.close")]

    def __init__(self, title: str, columns: list[str], rows: list[list[Any]]) -> None:
        super().__init__()
        say_bindings(self)
        self.title_text = title
        self.columns = columns
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(literal(self.title_text, "bold"))
            yield DataTable(id="figures", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*(literal(c) for c in self.columns))
        for row in self.rows:
            table.add_row(*[literal(x) for x in row])
        table.focus()

    def action_close(self) -> None:
        self.dismiss(None)


class Seats(Static):
    """The seats around the table, one row a seat, for reading only (it never takes a
    key). Drawn as a Rich table that fits the width it is given: the columns of numbers
    keep their width, the names and cards are cut with an ellipsis, so nothing is cut off
    at 80 columns (a ``DataTable`` keeps every column whole and scrolls instead)."""

    DEFAULT_CSS = "Seats { height: auto; }"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.columns: tuple[Text, ...] = ()
        self.rows: list[tuple[Text, ...]] = []

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def show(self, columns: tuple[Text, ...], rows: list[tuple[Text, ...]]) -> None:
        self.columns, self.rows = columns, rows
        grid = Table(box=None, expand=True, padding=(0, 1), pad_edge=False, header_style="bold",
                     row_styles=["", "on grey11"])
        widths = _min_widths(len(columns))
        for i, column in enumerate(columns):
            fixed = widths[i]
            grid.add_column(column, no_wrap=True, overflow="ellipsis", min_width=fixed,
                            ratio=None if fixed else 1)
        for row in rows:
            grid.add_row(*row)
        self.update(grid)


def _min_widths(count: int) -> list[int]:
    """The seats' columns: who, role, bid, trick, won, points, cards, total; the numbers
    and the trick's card keep their width, the names and roles share what is left."""
    if count != 8:
        return [0] * count
    return [0, 0, 5, 4, 3, 3, 3, 5]


def seat_table() -> Seats:
    """The seats' table of the table and replay screens."""
    return Seats(id="seats")


class LogIn(ModalScreen[tuple[str, str] | None]):
    """An account's name and password (docs/accounts.md): enter in the name goes to the
    password, enter there logs in; escape gives up. The password is never shown."""

    DEFAULT_CSS = """
    LogIn { align: center middle; }
    LogIn > Vertical { width: 60; max-width: 95%; height: auto; border: thick $accent; background: $surface;
                       padding: 0 1; }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "terminal.key.cancel")]

    def __init__(self) -> None:
        super().__init__()
        say_bindings(self)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(literal(t("terminal.login.title"), "bold"))
            yield Input(placeholder=t("terminal.login.name"), id="name", max_length=24)
            yield Input(placeholder=t("terminal.login.password"), id="password", password=True, max_length=256)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        name = self.query_one("#name", Input).value.strip()
        password = self.query_one("#password", Input).value
        if event.input.id == "name":
            self.query_one("#password", Input).focus()
        elif name and password:
            self.dismiss((name, password))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

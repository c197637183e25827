"""Small modal screens: pick one of many (commands, hands, games) with a filter, and
show a table of figures (the match ledger)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label, OptionList
from textual.widgets.option_list import Option

from clients.terminal.literal import literal


class Choose(ModalScreen[Any]):
    """A list of (text, value) to pick from; typing filters it. Escape picks nothing."""

    DEFAULT_CSS = """
    Choose { align: center middle; }
    Choose > Vertical { width: 80%; max-width: 90; height: 80%; border: thick $accent; background: $surface; }
    Choose Input { margin: 0 0 1 0; }
    Choose OptionList { height: 1fr; }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "cancel")]

    def __init__(self, title: str, choices: list[tuple[str, Any]]) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(literal(self.title_text), classes="title")
            yield Input(placeholder="type to filter, ↓ to the list, enter to choose", id="filter")
            yield OptionList(*self._options(""), id="choices")

    def _options(self, needle: str) -> list[Option]:
        words = needle.lower().split()
        return [Option(literal(text), id=str(i)) for i, (text, value) in enumerate(self.choices)
                if all(w in f"{text} {value}".lower() for w in words)]

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
        if event.key == "down" and self.query_one("#filter", Input).has_focus:
            self.query_one("#choices", OptionList).focus()
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
    BINDINGS = [Binding("escape,enter,q", "close", "close")]

    def __init__(self, title: str, columns: list[str], rows: list[list[Any]]) -> None:
        super().__init__()
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


def seat_table() -> DataTable[Text]:
    """The seats' table of the table and replay screens: for reading only, so it never
    takes the keys (a focused DataTable would eat the arrows, home and end)."""
    seats: DataTable[Text] = DataTable(id="seats", cursor_type="none", zebra_stripes=True)
    seats.can_focus = False
    return seats

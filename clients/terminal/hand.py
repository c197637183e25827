"""The seat's own cards as one focusable row: sorted by suit, the playable ones in their
colours and the others dimmed, a cursor to move with the arrows, and a selection for
the steps that take several cards (the discard)."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from clients.terminal.cards import label, sort_hand


class HandBar(Widget, can_focus=True):
    DEFAULT_CSS = """
    HandBar { height: auto; min-height: 3; padding: 1 1; border: round $accent; }
    HandBar:focus { border: round $success; }
    """
    BINDINGS = [
        Binding("left", "move(-1)", "←", show=False),
        Binding("right", "move(1)", "→", show=False),
        Binding("home", "jump(0)", show=False),
        Binding("end", "jump(-1)", show=False),
        Binding("space", "pick", "select", show=False),
        Binding("enter", "act", "play / confirm", show=False),
    ]

    cursor: reactive[int] = reactive(0)

    class Act(Message):
        """Enter on a card (``card``), or to confirm the selection (``card`` None)."""

        def __init__(self, card: str | None, selected: list[str]) -> None:
            super().__init__()
            self.card = card
            self.selected = selected

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.cards: list[str] = []
        self.playable: set[str] = set()
        self.selected: list[str] = []
        self.selecting = 0  # how many cards the current step takes; 0: one card at a time
        self.game: str | None = None

    def show(self, cards: list[str], playable: set[str], game: str | None, trump: str | None,
             selecting: int, *, ordered: bool = False) -> None:
        """``ordered``: ``cards`` come in the server's order (a view's ``hand_order``)."""
        current = self.cards[self.cursor] if 0 <= self.cursor < len(self.cards) else None
        self.cards = list(cards) if ordered else sort_hand(cards, game, trump)
        self.playable = playable
        self.game = game
        if selecting != self.selecting:
            self.selected = []
        self.selecting = selecting
        self.selected = [c for c in self.selected if c in self.cards]
        if current in self.cards:
            self.cursor = self.cards.index(current)
        elif self.playable:  # start on the first card that can be played
            self.cursor = next(i for i, c in enumerate(self.cards) if c in self.playable)
        else:
            self.cursor = min(self.cursor, max(0, len(self.cards) - 1))
        self.refresh(layout=True)

    def render(self) -> Text:
        if not self.cards:
            return Text("(no cards)", style="dim")
        shown, marks = Text(), Text()
        for i, card in enumerate(self.cards):
            text = label(card, self.game, dim=card not in self.playable)
            if card in self.selected:
                text.stylize("underline on dark_green")
            if i == self.cursor and self.has_focus:
                text.stylize("reverse")
            if i:
                shown.append("  ")
                marks.append("  ")
            shown.append_text(text)
            # a second line, so the cursor and the selection show on a terminal without colour
            mark = ("▲" if i == self.cursor else "") + ("✓" if card in self.selected else "")
            marks.append(mark.ljust(text.cell_len), style="bold green" if card in self.selected else "bold")
        shown.append("\n")
        shown.append_text(marks)
        if self.selecting:
            shown.append(f"\nselected {len(self.selected)} of {self.selecting}: space selects, enter confirms",
                         style="italic")
        return shown

    @property
    def current(self) -> str | None:
        return self.cards[self.cursor] if 0 <= self.cursor < len(self.cards) else None

    def action_move(self, step: int) -> None:
        if self.cards:
            self.cursor = (self.cursor + step) % len(self.cards)

    def action_jump(self, where: int) -> None:
        if self.cards:
            self.cursor = where % len(self.cards)

    def action_pick(self) -> None:
        card = self.current
        if card is None or not self.selecting:
            return
        if card in self.selected:
            self.selected.remove(card)
        elif card in self.playable and len(self.selected) < self.selecting:
            self.selected.append(card)
        self.refresh(layout=True)

    def action_act(self) -> None:
        if self.selecting:
            self.post_message(self.Act(None, list(self.selected)))
        elif self.current is not None:
            self.post_message(self.Act(self.current, []))

    def watch_cursor(self) -> None:
        self.refresh()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

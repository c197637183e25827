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
from clients.terminal.catalog import t


def start(cards: list[str], playable: set[str], current: str | None, cursor: int) -> int:
    """Where the cursor stands on a new view: on the card it was on while that card can
    still be played, else on the playable card nearest to it (the first one from the
    left when it was on none), else where it was."""
    if not cards:
        return 0
    if current in cards and (current in playable or not playable & set(cards)):
        return cards.index(current)
    near = cards.index(current) if current in cards else min(cursor, len(cards) - 1)
    legal = [i for i, card in enumerate(cards) if card in playable]
    if not legal:
        return near
    if current not in cards:
        return legal[0]
    return min(legal, key=lambda i: (abs(i - near), i))


class HandBar(Widget, can_focus=True):
    DEFAULT_CSS = """
    HandBar { height: auto; min-height: 3; padding: 0 1; border: round $accent; }
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

    def show(self, cards: list[str], playable: set[str], game: str | None, selecting: int, *,
             ordered: bool = False) -> None:
        """``ordered``: ``cards`` come in the server's order (a view's ``hand_order``),
        else they are sorted by the catalogue's order."""
        current = self.cards[self.cursor] if 0 <= self.cursor < len(self.cards) else None
        self.cards = list(cards) if ordered else sort_hand(cards, game)
        self.playable = playable
        self.game = game
        if selecting != self.selecting:
            self.selected = []
        self.selecting = selecting
        self.selected = [c for c in self.selected if c in self.cards]
        self.cursor = start(self.cards, self.playable, current, self.cursor)
        self.refresh(layout=True)

    def render(self) -> Text:
        if not self.cards:
            return Text(t("terminal.hand.none"), style="dim")
        width = max(8, self.content_size.width or 78)
        rows: list[tuple[Text, Text]] = []
        shown, marks = Text(), Text()
        for i, card in enumerate(self.cards):
            text = label(card, self.game, dim=card not in self.playable)
            if card in self.selected:
                text.stylize("underline on dark_green")
            if i == self.cursor and self.has_focus:
                text.stylize("reverse")
            if shown.cell_len and shown.cell_len + 2 + text.cell_len > width:
                rows.append((shown, marks))  # a new row: the hand is wider than the bar
                shown, marks = Text(), Text()
            if shown.cell_len:
                shown.append("  ")
                marks.append("  ")
            shown.append_text(text)
            # a second line, so the cursor and the selection show on a terminal without colour
            mark = ("▲" if i == self.cursor else "") + ("✓" if card in self.selected else "")
            marks.append(mark.ljust(text.cell_len), style="bold green" if card in self.selected else "bold")
        rows.append((shown, marks))
        drawn = Text("\n").join(Text.assemble(top, "\n", under) for top, under in rows)
        if self.selecting:
            drawn.append("\n" + t("terminal.hand.selected", n=len(self.selected), count=self.selecting),
                         style="italic")
        return drawn

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

"""A finished hand, step by step (``/hands/{n}/replay?as=…``, docs/api.md): left and right
arrows move one command, home and end to the deal and the last step.

Each step's ``view`` is the game's seat view after that command, as the chosen reader
(a seat, the spectator, or the audit that sees every hand) saw it; it is shown with the
table screen's own rendering.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from clients.terminal import board
from clients.terminal.cards import cards_text, plain, sort_hand
from clients.terminal.catalog import say_bindings, t
from clients.terminal.dialogs import Seats, seat_table
from clients.terminal.literal import literal
from clients.terminal.words import step as step_line


def as_view(step: dict[str, Any], game: str | None, seats: int) -> dict[str, Any]:
    """A replay step in the shape of an API view, so the table's rendering draws it."""
    shown = step.get("view") or {}
    viewer = shown.get("viewer")
    return {"state": shown, "seat": viewer, "hand": shown.get("hand"), "phase": shown.get("phase"),
            "to_act": shown.get("to_act"), "game": game, "seats": [None] * seats,
            "dealer": shown.get("dealer"), "legal": [], "hand_no": (shown.get("hand_no") or 0) + 1}


def audit_hands(shown: dict[str, Any]) -> list[list[str]] | None:
    """Every seat's cards at this step, for the audit reader (who was shown the deal)."""
    dealt = shown.get("dealt")
    if not dealt:
        return None
    gone: set[str] = set()
    for done in shown.get("tricks") or ():
        gone.update(done.get("cards") or ())
    trick = shown.get("trick")
    if isinstance(trick, dict):
        gone.update(trick.get("cards") or ())
    hands = [[c for c in cards if c not in gone] for cards in dealt]
    declarer = shown.get("declarer")
    if declarer is not None and shown.get("discards") is not None and shown.get("kitty"):
        kept = set(shown["discards"])
        hands[declarer] = [c for c in [*hands[declarer], *shown["kitty"]] if c not in kept and c not in gone]
    return hands


def review_lines(shown: dict[str, Any], names: list[str], game: str | None) -> Text | None:
    """The review (docs/api.md, "Audit and replay"): each seat's cards open, what it holds,
    then what it has parted with so far, struck and dimmed, each with the trick it went to
    (``→3``; ``→×`` for a card buried in the exchange). None for a view without ``remaining``."""
    remaining = shown.get("remaining")
    if not isinstance(remaining, list):
        return None
    played = shown.get("played") or [[] for _ in remaining]
    lines = [Text(t("terminal.review.legend"), style="dim")]
    for seat, cards in enumerate(remaining):
        line = Text.assemble(f"{board.seat_name(names, seat)}: ", cards_text(sort_hand(list(cards), game), game))
        marks = played[seat] if seat < len(played) else []
        if marks:
            line.append("  │ ", style="dim")
            for i, mark in enumerate(marks):
                if i:
                    line.append(" ")
                line.append_text(Text(plain(mark["card"], game), style="dim strike"))
                trick = mark.get("trick")
                line.append("→×" if trick is None else f"→{trick}", style="dim")
        lines.append(line)
    return Text("\n").join(lines)


def describe_step(step: dict[str, Any], names: list[str], game: str | None) -> str:
    """The step's command as the server says it (its ``label``, in the reader's language;
    another seat's face-down cards as how many: docs/api.md, "Audit and replay")."""
    return step_line(step, names, game)


class ReplayScreen(Screen[None]):
    DEFAULT_CSS = """
    ReplayScreen #where { padding: 0 1; background: $boost; height: auto; }
    ReplayScreen #status, ReplayScreen #trick, ReplayScreen #result, ReplayScreen #cards { padding: 0 1; height: auto; }
    """
    BINDINGS = [
        Binding("left", "step(-1)", "terminal.key.back"),
        Binding("right", "step(1)", "terminal.key.forward"),
        Binding("home", "go(0)", "terminal.key.deal"),
        Binding("end", "go(-1)", "terminal.key.end"),
        Binding("escape", "back", "terminal.key.close"),
    ]

    index: reactive[int] = reactive(0)

    def __init__(self, table: str, hand: int, reader: str, steps: list[dict[str, Any]],
                 names: list[str], game: str | None) -> None:
        super().__init__()
        say_bindings(self)
        self.table = table
        self.hand = hand
        self.reader = reader
        self.steps = steps
        self.names = names
        self.game = game

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            yield Static(id="where")
            yield Static(id="status")
            yield seat_table()
            yield Static(id="trick")
            yield Static(id="cards")
            yield Static(id="result")
        yield Footer()

    def on_mount(self) -> None:
        self.title = t("terminal.replay.title", n=self.hand, table=self.table)
        self.sub_title = t("terminal.replay.as_reader", reader=self.reader)
        self.redraw()

    def action_step(self, by: int) -> None:
        self.index = max(0, min(len(self.steps) - 1, self.index + by))

    def action_go(self, where: int) -> None:
        self.index = where % len(self.steps) if self.steps else 0

    def watch_index(self) -> None:
        if self.is_mounted:
            self.redraw()

    def redraw(self) -> None:
        if not self.steps:
            self.query_one("#where", Static).update(literal(t("terminal.replay.no_steps")))
            return
        step = self.steps[self.index]
        shown = step.get("view") or {}
        seats = len(shown.get("hand_sizes") or ()) or len(self.names)
        view = as_view(step, self.game, seats)
        self.query_one("#where", Static).update(Text.assemble(
            (t("terminal.replay.step", n=self.index, count=len(self.steps) - 1), "bold"), "  ",
            describe_step(step, self.names, self.game), ("   " + t("terminal.replay.arrows"), "dim")))
        self.query_one("#status", Static).update(board.status(view, self.names))
        self.query_one(Seats).show(board.seat_columns(), board.seat_rows(view, self.names))
        self.query_one("#trick", Static).update(board.last_trick(view, self.names) or "")
        self.query_one("#result", Static).update(board.result(view, self.names) or "")
        self.query_one("#cards", Static).update(self._cards(shown))

    def _cards(self, shown: dict[str, Any]) -> Text:
        review = review_lines(shown, self.names, self.game)
        if review is not None:
            return review
        hands = audit_hands(shown)
        if hands is not None:
            lines = [Text.assemble(f"{board.seat_name(self.names, s)}: ",
                                   cards_text(sort_hand(cards, self.game), self.game))
                     for s, cards in enumerate(hands)]
            return Text("\n").join(lines)
        if shown.get("hand") is not None:
            return Text.assemble(t("terminal.replay.hand") + " ", cards_text(sort_hand(list(shown["hand"]), self.game), self.game))
        return Text(t("terminal.replay.no_hand"), style="dim")

    def action_back(self) -> None:
        self.app.pop_screen()


"""The table screen: the seats around the table, the trick, your hand, and every phase
from the keyboard.

It follows the table's stream (``stream.TableStream``): each pushed view replaces the
shown one. Cards are played from the hand bar; the steps that are not one card (a bid,
a pass, the trump change, the friend call, Mitigati's bargaining and declarations…) are
the view's other legal commands, listed by name in a menu (``m``). A refused command is
shown with the API's own sentence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, RichLog, Static

from clients.terminal import board
from clients.terminal.api import ApiError
from clients.terminal.cards import deck, plain
from clients.terminal.catalog import say_bindings, t
from clients.terminal.dialogs import Choose, Figures, Seats, seat_table
from clients.terminal.hand import HandBar
from clients.terminal.literal import literal, tell
from clients.terminal.stream import TableStream
from clients.terminal.words import refusal, said, seat_name

UNSENT = frozenset({"offline", "unavailable"})  # the command did not reach the table

if TYPE_CHECKING:
    from clients.terminal.app import PlayApp


class TableScreen(Screen[None]):
    # Wide (100 columns or more): the board, and beside it the log. Narrow (an 80×24
    # terminal): the log under the board, a few lines high, so no column is cut.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    DEFAULT_CSS = """
    TableScreen #main { height: 1fr; layout: horizontal; }
    TableScreen #board { width: 2fr; height: 1fr; }
    TableScreen #side { width: 1fr; min-width: 30; }
    TableScreen.-narrow #main { layout: vertical; }
    TableScreen.-narrow #board { width: 100%; height: auto; }
    TableScreen.-narrow #side { width: 100%; min-width: 0; height: 1fr; min-height: 2; }
    TableScreen.-narrow #log { border: none; border-top: solid $primary; }
    TableScreen #status { padding: 0 1; height: auto; }
    TableScreen #seats { padding: 0 1; }
    TableScreen #trick { padding: 0 1; height: auto; }
    TableScreen #result { padding: 0 1; height: auto; }
    TableScreen #log { height: 1fr; border: round $primary; }
    TableScreen #prompt { padding: 0 1; height: auto; background: $boost; }
    TableScreen #connection { height: 1; padding: 0 1; }
    TableScreen #say { display: none; }
    TableScreen #say.talking { display: block; }
    """
    BINDINGS = [
        Binding("m", "menu", "terminal.key.commands"),
        Binding("t", "talk", "terminal.key.chat"),
        Binding("l", "ledger", "terminal.key.ledger"),
        Binding("p", "replay", "terminal.key.replay"),
        Binding("r", "review", "terminal.key.review"),
        Binding("h", "hint", "terminal.key.hint"),
        Binding("x", "rematch", "terminal.key.rematch"),
        Binding("ctrl+r", "reconnect", "reconnect", show=False),
        Binding("escape", "back", "terminal.key.lobby"),
    ]

    def __init__(self, table: str, *, seat: int | None = None, follow: bool = True) -> None:
        super().__init__()
        say_bindings(self)
        self.table = table
        self.follow = follow  # False: show only the views handed to ``show_view`` (a recorded one)
        self.seat = seat
        self.view: dict[str, Any] = {}
        self.names: list[str] = []
        self.moves = board.Moves()
        self.stream: TableStream | None = None
        self.views_shown = 0
        self.refusals: list[str] = []  # each refusal's message, as shown (tests read it)
        self.logged: list[str] = []  # the log's lines as plain text
        self.chatted: list[str] = []  # the chat's messages as shown, "name: text"
        self.last_result: Text | None = None  # the last hand's result, shown until the next one
        self.sending = False
        self.step: dict[str, Any] | None = None  # the discard step chosen from the menu

    @property
    def play_app(self) -> PlayApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header()
        with Container(id="main"):
            with Vertical(id="board"):
                yield Static(id="status")
                yield seat_table()
                yield Static(id="trick")
                yield Static(id="result")
            with Vertical(id="side"):
                yield Static(id="connection")
                yield RichLog(id="log", wrap=True, markup=False, min_width=20)
                yield Input(id="say", placeholder=t("terminal.chat.placeholder"), max_length=280)
        yield Static(id="prompt")
        yield HandBar(id="hand")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(HandBar).focus()
        self.title = t("terminal.table.title", table=self.table)
        self.set_interval(1.0, self._tick)
        if not self.follow:
            return
        self.stream = TableStream(self.play_app.api, self.table, self._on_view, self._on_connection,
                                  on_chat=self.show_chat)
        self.run_worker(self.stream.run(), name="stream", exit_on_error=False)
        self._load_names()

    async def on_unmount(self) -> None:
        if self.stream is not None:
            await self.stream.stop()

    @work(exclusive=True, group="names", exit_on_error=False)
    async def _load_names(self) -> None:
        try:
            found = await self.play_app.api.table(self.table)
        except ApiError as error:
            self._log(Text(refusal(error.code, error.message), style="red"))
            return
        self.names = [seat_name(s) for s in found["seats"]]
        known = deck(found.get("game"))
        game = known.name if known is not None else found.get("game")
        self.sub_title = f"{found.get('name')} · {game} · {t('terminal.table.hands', n=found.get('hands'))}"
        self.redraw()

    def show_view(self, view: dict[str, Any], names: list[str] | None = None) -> None:
        """Show ``view`` as if the stream had pushed it."""
        if names is not None:
            self.names = names
        self._show(view)

    async def _on_view(self, view: dict[str, Any]) -> None:
        self._show(view)

    def _show(self, view: dict[str, Any]) -> None:
        before = self.view
        self.view = view
        self.views_shown += 1
        if self.follow and (view.get("seats") != before.get("seats")
                            or view.get("hands_scored") != before.get("hands_scored")):
            self._load_names()
        self._narrate(before, view)
        self.redraw()

    @work(group="result", exit_on_error=False)
    async def _fetch_result(self, hand: int) -> None:
        reader = "spectator" if self.view.get("seat") is None else str(self.view["seat"])
        try:
            steps = await self.play_app.api.replay(self.table, hand, reader)
        except ApiError as error:
            self._log(Text(refusal(error.code, error.message), style="red"))
            return
        last = (steps[-1].get("view") or {}) if steps else {}
        text = board.result({"state": last}, self.names)
        if text is not None:
            text = Text.assemble(t("terminal.result.of_hand", n=hand) + " ", text)
            self.last_result = text
            self._log(text)
            self._line("#result", text)

    def _on_connection(self, state: str) -> None:
        style = "green" if state == "connected" else "yellow"
        if state in ("connected", "reconnecting"):
            shown = t(f"terminal.table.{state}")
        else:  # the server's error frame: its sentence
            shown = t("terminal.table.error", message=state.removeprefix("error: "))
        self.query_one("#connection", Static).update(Text(f"● {shown}", style=style))

    def _tick(self) -> None:
        if self.view.get("deadline"):
            self.query_one("#status", Static).update(board.status(self.view, self.names))

    def _log(self, text: Text | str) -> None:
        self.logged.append(text.plain if isinstance(text, Text) else text)
        self.query_one("#log", RichLog).write(text)

    def _narrate(self, before: dict[str, Any], view: dict[str, Any]) -> None:
        """A line in the log for what changed: a trick taken, a hand scored."""
        old, new = board.state(before), board.state(view)
        for line in board.auction_news(before, view, self.names):
            self._log(line)
        for played in board.trick_news(before, view, self.names):
            self._log(played)
        if len(new.get("tricks") or ()) > len(old.get("tricks") or ()):
            text = board.last_trick(view, self.names)
            if text is not None:
                self._log(text)
        if new.get("scores") and not old.get("scores"):
            text = board.result(view, self.names)
            if text is not None:
                self.last_result = text
                self._log(text)
        elif before and (view.get("hands_scored") or 0) > (before.get("hands_scored") or 0):
            # the next deal came in the same command as the last trick: no view showed the
            # scored hand, so its result is read from its replay
            self._fetch_result(int(view["hands_scored"]))
        if view.get("status") == "closed" and before.get("status") != "closed":
            self._log(Text(t("terminal.table.match_over"), style="bold"))

    def redraw(self) -> None:
        view = self.view
        if not view:
            return
        self.moves = board.moves(view)
        self.query_one("#status", Static).update(board.status(view, self.names))
        self.query_one(Seats).show(board.seat_columns(), board.seat_rows(view, self.names))
        self._line("#trick", board.last_trick(view, self.names))
        self._line("#result", board.result(view, self.names) or self.last_result)
        self.query_one("#prompt", Static).update(literal(board.prompt(view, self.moves, self.current_step())))
        hand = self.query_one(HandBar)
        hand.display = view.get("seat") is not None
        step = self.current_step()
        # the server's order where the hand decides it (``hand_order``: Mighty's trump first)
        cards = board.step_cards(list(view.get("hand_order") or view.get("hand") or ()), step)
        hand.show(cards, set(step.get("from") or ()) if step else self.moves.cards, view.get("game"),
                  int(step["count"]) if step else 0, ordered="hand_order" in view)

    def _line(self, where: str, text: Text | None) -> None:
        """A line of the board, taking no room while it has nothing to say (80×24)."""
        shown = self.query_one(where, Static)
        shown.update(text or "")
        shown.display = text is not None

    def current_step(self) -> dict[str, Any] | None:
        """The selection under way: the view's one discard step, or the one chosen from
        the menu among several (mighty-3's, one for each set of kitty cards to keep)."""
        if self.moves.discard is not None:
            return self.moves.discard
        return self.step if self.step is not None and self.step in self.moves.menu else None

    # the keyboard
    def on_hand_bar_act(self, message: HandBar.Act) -> None:
        step = self.current_step()
        if step is not None:
            if len(message.selected) != int(step["count"]):
                self._refused("select", t("terminal.table.select_first", count=step["count"],
                                          n=len(message.selected)))
                return
            self.send(board.discard_command(step, message.selected))
            return
        card = message.card
        if card is None or (not self.moves.plays and self.moves.menu):
            self.action_menu()  # nothing to play: enter opens the commands
            return
        choices = self.moves.plays.get(card)
        if not choices:
            # not marked as playable: send it anyway, so the refusal says why in the rules' words
            self.send({"type": "play", "card": card})
        elif len(choices) == 1:
            self.send(choices[0])
        else:  # the Joker's named suit, or whether the Ripper calls the Joker
            game = self.view.get("game")
            self.app.push_screen(Choose(t("terminal.table.how_to_play", card=plain(card, game)), [(said(c, game), c) for c in choices]),
                                 self._chosen)

    def action_menu(self) -> None:
        if not self.moves.menu:
            tell(self, t("terminal.table.no_command"), severity="warning")
            return
        self.choose_command(list(self.moves.menu))

    @work(exclusive=True, group="menu", exit_on_error=False)
    async def choose_command(self, entries: list[dict[str, Any]]) -> None:
        """The commands by name; too many to list (a friend call of two packs) are
        narrowed step by step first: the kind, the suit, the card (``board.narrowing``)."""
        game = self.view.get("game")
        while (groups := board.narrowing(entries, game)) is not None:
            picked = await self.app.push_screen_wait(Choose(t("terminal.table.your_move"), groups, by_text=True))
            if picked is None:
                return
            entries = picked
        command = await self.app.push_screen_wait(Choose(t("terminal.table.your_move"),
                                                          [(said(c, game), c) for c in entries]))
        self._chosen(command)

    def _chosen(self, command: dict[str, Any] | None) -> None:
        if command is None:
            return
        if board.is_step(command):  # a selection to make in the hand first, then enter
            self.step = command
            self.redraw()
            return
        self.send(command)

    @work(group="send", exit_on_error=False)
    async def send(self, command: dict[str, Any]) -> None:
        if self.stream is None:
            return
        self.sending = True
        try:
            await self.stream.send(command)
        except ApiError as error:
            if error.code in UNSENT:  # not a refusal: the gateway was not reached
                self._unsent(error.message)
            else:
                self._refused(error.code, error.message)
        else:
            self._log(Text(t("terminal.table.you", command=said(command, self.view.get("game"))), style="green"))
        finally:
            self.sending = False

    def _unsent(self, message: str) -> None:
        """A command that did not reach the gateway, after the socket's wait and the HTTP
        retries: said once, as a warning, with what to do."""
        self._log(Text(t("terminal.table.not_sent", message=message), style="yellow"))
        tell(self, f"{message} {t('terminal.table.send_again')}", title=t("terminal.table.not_sent_title"),
             severity="warning")

    def _refused(self, code: str, message: str) -> None:
        self.refusals.append(message)
        self._log(Text(refusal(code, message), style="bold red"))
        tell(self, message, title=t("terminal.table.refused_title"), severity="error")

    async def action_reconnect(self) -> None:
        if self.stream is not None:
            self._log(Text(t("terminal.table.dropping"), style="yellow"))
            await self.stream.drop()

    @work(group="ledger", exit_on_error=False)
    async def action_ledger(self) -> None:
        try:
            ledger = await self.play_app.api.ledger(self.table)
        except ApiError as error:
            self._refused(error.code, error.message)
            return
        seats = len(ledger.get("totals") or ())
        columns = [t("terminal.table.ledger_hand"), *[board.seat_name(self.names, s) for s in range(seats)]]
        rows: list[list[Any]] = [[h["hand"], *h["scores"]] for h in ledger.get("hands") or ()]
        rows.append([t("terminal.seats.total"), *(ledger.get("totals") or ())])
        self.app.push_screen(Figures(t("terminal.table.ledger_title", table=self.table), columns, rows))

    async def action_hint(self) -> None:
        """What a bot would play here (docs/api.md, "Hints"): said in the log, and the
        cursor put on its card."""
        try:
            hint = await self.play_app.api.hint(self.table)
        except ApiError as error:
            self._refused(error.code, error.message)
            return
        self._log(Text(t("terminal.hint.says", label=hint.get("label") or ""), style="bold cyan"))
        card = (hint.get("command") or {}).get("card")
        bar = self.query_one(HandBar)
        if isinstance(card, str) and card in bar.cards:
            bar.cursor = bar.cards.index(card)
            bar.focus()

    def action_replay(self) -> None:
        self.play_app.choose_replay(self.table, self.view.get("seat"))

    def action_review(self) -> None:
        """The review of the last hand that has ended: every hand open, card by card."""
        view = self.view
        if not view:
            return
        ended = view.get("hand_no", 0) if view.get("phase") == "finished" or view.get("status") == "closed" \
            else view.get("hand_no", 0) - 1
        if ended < 1:
            tell(self.play_app, t("terminal.replay.none"), severity="warning")
            return
        self.play_app.open_review(self.table, int(ended))

    @work(group="rematch", exit_on_error=False)
    async def action_rematch(self) -> None:
        if self.view.get("status") != "closed":
            tell(self, t("terminal.table.rematch_only"), severity="warning")
            return
        try:
            made = await self.play_app.api.rematch(self.table)
        except ApiError as error:
            self._refused(error.code, error.message)
            return
        seat = next((s["seat"] for s in made["seats"] if s.get("player") == self.play_app.player), None)
        self.app.switch_screen(TableScreen(made["table"], seat=seat))

    # the table's chat (docs/api.md, "Table chat")
    def show_chat(self, frame: dict[str, Any]) -> None:
        """A message of the table's chat in the log: who, then what they said, as text."""
        said_by = str(frame.get("name") or frame.get("player") or "?")
        self.chatted.append(f"{said_by}: {frame.get('text')}")
        self._log(Text.assemble((said_by, "bold cyan"), ": ", str(frame.get("text") or "")))

    def action_talk(self) -> None:
        say = self.query_one("#say", Input)
        say.add_class("talking")
        say.focus()

    def _stop_talking(self) -> None:
        say = self.query_one("#say", Input)
        say.value = ""
        say.remove_class("talking")
        self.query_one(HandBar).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "say":
            return
        text = event.value.strip()
        self._stop_talking()
        if text:
            self.say(text)

    @work(group="chat", exit_on_error=False)
    async def say(self, text: str) -> None:
        try:
            await self.play_app.api.chat(self.table, text)
        except ApiError as error:  # too long, too fast, muted…: the server's sentence
            self._log(Text(refusal(error.code, error.message), style="red"))
            tell(self, error.message, title=t("terminal.chat.not_said"), severity="warning")

    def action_back(self) -> None:
        if self.query_one("#say", Input).has_class("talking"):
            self._stop_talking()  # escape closes the chat line first
            return
        self.app.pop_screen()


"""The terminal client's table screen driven by Textual's pilot, keys only, at 80×24 (and
120×40), against a table played on the domain alone: each view is the document the
gateway would send (``tests/unit/terminal_tables.py``), each command the client sends is
taken as the gateway takes it. The players' findings (a false "offline" toast, enter
sending the first command of the menu, the cursor on a card that cannot be played,
columns cut at 80 columns) and every phase of every rule set from the keyboard.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.app import App
from textual.widgets import OptionList, Static

from clients.terminal import board, session
from clients.terminal.api import Api
from clients.terminal.app import PlayApp
from clients.terminal.cards import register, suit_label
from clients.terminal.catalog import use
from clients.terminal.dialogs import Choose, Seats
from clients.terminal.hand import HandBar
from clients.terminal.lobby import LobbyScreen
from clients.terminal.table import TableScreen
from domain.mighty.state import Bidding, Playing
from tests.unit.terminal_tables import DomainTable, FakeStream, catalogue

FIXTURES = Path(__file__).parent.parent / "fixtures" / "terminal"
SMALL = (80, 24)
LARGE = (120, 40)


@pytest.fixture(autouse=True)
def games() -> None:
    """The games catalogue as the client reads it at login (``GET /games``)."""
    register(catalogue("en"))


class Shown(App[None]):
    """A table screen on its own, fed views by the test (no gateway)."""

    def __init__(self, table: DomainTable | None = None) -> None:
        super().__init__()
        self.table = table
        self.screen_under_test = TableScreen("t-pilot", seat=0, follow=False)

    def on_mount(self) -> None:
        self.push_screen(self.screen_under_test)


async def until(pilot: Any, ok: Callable[[], bool], what: str, timeout_s: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not ok():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.01)


def rendered(widget: Any) -> list[str]:
    """The lines a widget draws now, as text."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


def on_screen(app: App[Any], widget: Any, size: tuple[int, int]) -> bool:
    """Whether ``widget`` is drawn whole inside the terminal."""
    region = widget.region
    return region.height > 0 and region.x >= 0 and region.right <= size[0] and region.bottom <= size[1]


def recorded(name: str) -> tuple[dict[str, Any], list[str]]:
    doc = json.loads((FIXTURES / name).read_text())
    return doc["view"], [s["name"] for s in doc["table"]["seats"]]


def start(variant: str, seed: int) -> tuple[Shown, DomainTable]:
    table = DomainTable(variant, seed)
    table.others_play()
    return Shown(table), table


async def attach(pilot: Any, app: Shown) -> TableScreen:
    """The screen under test, its sends going to the domain table."""
    await until(pilot, lambda: app.screen is app.screen_under_test, "the table screen")
    screen = app.screen_under_test
    assert app.table is not None
    screen.stream = FakeStream(app.table, screen)  # type: ignore[assignment]
    screen.show_view(app.table.view(), app.table.names)
    await pilot.pause()
    return screen


# ------------------------------------------------------------------ the players' findings


def test_enter_in_the_commands_sends_the_highlighted_command_not_the_first() -> None:
    app, table = start("mighty-5", 5)

    async def drive() -> None:
        async with app.run_test(size=SMALL) as pilot:
            screen = await attach(pilot, app)
            menu = screen.moves.menu
            assert len(menu) > 3 and screen.view["phase"] == "bidding"
            await pilot.press("m")
            await until(pilot, lambda: isinstance(app.screen, Choose), "the commands")
            listed = app.screen.query_one(OptionList)
            assert listed.highlighted == 0  # the first is marked from the start: enter takes what is marked
            await pilot.press("down")  # from the filter to the list, on the first
            await pilot.press("down", "down")
            assert listed.has_focus and listed.highlighted == 2
            await pilot.press("enter")
            await until(pilot, lambda: bool(screen.stream.sent), "the command")  # type: ignore[union-attr]
            assert screen.stream.sent == [menu[2]]  # type: ignore[union-attr]

    asyncio.run(drive())


def test_enter_in_the_filter_sends_the_command_marked_in_the_filtered_list() -> None:
    app, table = start("mighty-5", 5)

    async def drive() -> None:
        async with app.run_test(size=SMALL) as pilot:
            screen = await attach(pilot, app)
            wanted = next(c for c in screen.moves.menu if c["type"] == "bid")
            await pilot.press("m")
            await until(pilot, lambda: isinstance(app.screen, Choose), "the commands")
            await pilot.press(*wanted["label"])
            await pilot.press("enter")
            await until(pilot, lambda: bool(screen.stream.sent), "the command")  # type: ignore[union-attr]
            assert screen.stream.sent == [wanted]  # type: ignore[union-attr]

    asyncio.run(drive())


def test_the_cursor_starts_on_a_card_that_can_be_played_when_the_turn_comes() -> None:
    view, names = recorded("mighty5_play.json")
    before = {**copy.deepcopy(view), "to_act": 1, "legal": []}  # the same hand, another's turn
    app = Shown()

    async def drive() -> None:
        async with app.run_test(size=SMALL) as pilot:
            await until(pilot, lambda: app.screen is app.screen_under_test, "the table screen")
            screen = app.screen_under_test
            screen.show_view(before, names)
            await pilot.pause()
            hand = screen.query_one(HandBar)
            assert hand.current == hand.cards[0] and hand.current not in board.moves(view).plays
            screen.show_view(view, names)  # now it is the seat's turn: only 5♦ 6♦ and the Joker play
            await pilot.pause()
            assert hand.current in {"5D", "6D", "JK"}
            await pilot.press("home")
            assert hand.current == hand.cards[0]
            screen.show_view({**view, "version": view["version"] + 1}, names)  # a card not playable under the cursor
            await pilot.pause()
            assert hand.current in {"5D", "6D", "JK"}

    asyncio.run(drive())


@pytest.mark.parametrize("size", [SMALL, LARGE])
@pytest.mark.parametrize("variant", ["mighty-5", "mighty-7", "mighty-8", "mitigati"])
def test_every_column_every_seat_and_every_card_is_on_screen(size: tuple[int, int], variant: str) -> None:
    app, table = start(variant, 2)

    async def drive() -> None:
        async with app.run_test(size=size) as pilot:
            screen = await attach(pilot, app)
            seats = screen.query_one(Seats)
            lines = rendered(seats)
            assert seats.row_count == len(table.names)
            header = lines[0]
            for column in board.seat_columns():
                assert column.plain in header, (column, header)
            for name in table.names:
                assert any(name in line for line in lines), (name, lines)
            hand = screen.query_one(HandBar)
            drawn = "\n".join(rendered(hand))
            assert all(board.card_text(card, screen.view.get("game")) in drawn for card in hand.cards), drawn
            for widget in ("#status", "#seats", "#prompt", "#hand", "#log"):
                assert on_screen(app, screen.query_one(widget), size), (widget, screen.query_one(widget).region)

    asyncio.run(drive())


def test_a_lobby_under_a_table_polls_nothing_and_a_failed_poll_is_no_toast(tmp_path: Path) -> None:
    """The lobby's list refreshes every 5 s: under a table screen it asked the gateway all
    the same, and any hiccup (a gateway restarting, a kept-alive connection it closed)
    came up over the table as an "offline" toast."""
    asked: list[str] = []
    down = {"now": False}

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/games"):
            return httpx.Response(200, json={"games": catalogue("en")})
        asked.append(request.url.path)
        if down["now"]:
            raise httpx.ConnectError("connection refused")
        return httpx.Response(200, json={"tables": []})

    config = tmp_path / "play.json"
    session.save(config, "http://gateway.test", {"player": "p1", "name": "Ana", "token": "t1"})
    app = PlayApp("http://gateway.test", config=config)
    app.api = Api("http://gateway.test", transport=httpx.MockTransport(answer))

    async def drive() -> None:
        async with app.run_test(size=SMALL, notifications=True) as pilot:
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen) and bool(asked), "the lobby")
            lobby = app.screen
            assert isinstance(lobby, LobbyScreen)
            down["now"] = True
            lobby._poll()  # the lobby's own refresh, on the lobby: said on its line
            await pilot.pause(0.1)
            assert not app._notifications, list(app._notifications)
            assert "the list is from before" in str(lobby.query_one("#who", Static).render())
            app.push_screen(TableScreen("t1", seat=0, follow=False))
            await pilot.pause()
            polled = len(asked)
            lobby._poll()  # under the table: nothing asked
            await pilot.pause(0.1)
            assert len(asked) == polled and not app._notifications
            app.pop_screen()
            await pilot.pause()
            await pilot.press("r")  # a refresh asked for: its failure is a toast
            await until(pilot, lambda: bool(app._notifications), "the toast")

    asyncio.run(drive())


def test_a_kept_alive_connection_the_gateway_closed_is_tried_again_not_offline() -> None:
    calls: list[int] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        return httpx.Response(200, json={"tables": [{"table": "t1"}]})

    async def ask() -> list[dict[str, Any]]:
        api = Api("http://gateway.test", transport=httpx.MockTransport(answer))
        try:
            return await api.tables()
        finally:
            await api.close()

    assert asyncio.run(ask()) == [{"table": "t1"}] and len(calls) == 2


def test_a_command_sent_while_the_socket_reopens_goes_over_it_once_it_is_back() -> None:
    """A routine reconnect: the command waits for the socket rather than meet the same
    outage over HTTP and come back "offline"."""
    from clients.terminal.stream import TableStream

    def no_http(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"sent over HTTP: {request.url}")

    async def send() -> int:
        stream = TableStream(Api("http://gateway.test", "tok", transport=httpx.MockTransport(no_http)), "t1",
                             on_view=None, on_state=lambda _: None)  # type: ignore[arg-type]
        stream.connects = 1  # it was open, and dropped

        class Socket:
            async def send(self, raw: str) -> None:
                cid = json.loads(raw)["id"]
                asyncio.get_running_loop().call_soon(
                    lambda: asyncio.ensure_future(stream._frame({"type": "ack", "id": cid, "version": 7})))

        sending = asyncio.ensure_future(stream.send({"type": "pass"}))
        await asyncio.sleep(0.1)
        assert not sending.done()
        stream._ws = Socket()  # type: ignore[assignment]
        stream._open.set()
        return await asyncio.wait_for(sending, 2)

    assert asyncio.run(send()) == 7


def test_a_command_the_gateway_never_got_is_not_sent_a_warning_and_no_refusal() -> None:
    """A gateway unreachable for good is said as "not sent", a warning, never a refusal."""
    view, names = recorded("mighty5_play.json")
    app = Shown()

    class Down:
        async def send(self, command: dict[str, Any]) -> int:
            from clients.terminal.api import ApiError

            raise ApiError(0, "offline", "The server at http://gateway.test cannot be reached.")

        async def stop(self) -> None:
            return None

    async def drive() -> None:
        async with app.run_test(size=SMALL, notifications=True) as pilot:
            await until(pilot, lambda: app.screen is app.screen_under_test, "the table screen")
            screen = app.screen_under_test
            screen.stream = Down()  # type: ignore[assignment]
            screen.show_view(view, names)
            await pilot.pause()
            await pilot.press("enter")
            await until(pilot, lambda: bool(app._notifications), "the warning")
            notes = list(app._notifications)
            assert [n.severity for n in notes] == ["warning"] and notes[0].title != "Refused"
            assert screen.refusals == [] and any(line.startswith("Not sent") for line in screen.logged)

    asyncio.run(drive())


# ------------------------------------------------------------------ every phase from the keyboard


async def press_card(pilot: Any, hand: HandBar, card: str) -> None:
    """Move the hand bar's cursor to ``card`` with the arrow keys."""
    target = hand.cards.index(card)
    key = "right" if target > hand.cursor else "left"
    for _ in range(abs(target - hand.cursor)):
        await pilot.press(key)
    assert hand.current == card


async def pick(pilot: Any, app: App[Any], index: int) -> None:
    """In the open list, the ``index``-th entry with the arrows, then enter."""
    await until(pilot, lambda: isinstance(app.screen, Choose), "the list")
    await pilot.press("down", *["down"] * index, "enter")


async def walk_to(pilot: Any, app: App[Any], wanted: dict[str, Any]) -> set[str]:
    """Through the commands' lists to ``wanted``: a list too long is narrowed step by
    step (the kind, the suit, the card), each step with the arrows and enter."""
    steps: set[str] = set()
    while True:
        await until(pilot, lambda: isinstance(app.screen, Choose), "the list")
        listed = app.screen
        assert isinstance(listed, Choose)
        values = [value for _, value in listed.choices]
        index = next(i for i, v in enumerate(values) if v == wanted or (isinstance(v, list) and wanted in v))
        await pilot.press("down", *["down"] * index, "enter")
        if not isinstance(values[index], list):
            return steps
        steps.add("narrowed")
        await until(pilot, lambda listed=listed: app.screen is not listed, "the next list")  # type: ignore[misc]


def side_points_of(table: DomainTable) -> tuple[int, int] | None:
    """The point cards the declarer and the friends revealed so far took, and the
    contract, read from the domain's own state (not from the view the client draws)."""
    hand = table.state.hand
    if not isinstance(hand, Playing):
        return None
    side = {hand.declarer, *hand.revealed, *((hand.friend,) if hand.friend_known and hand.friend is not None else ())}
    return sum(hand.taken[s] for s in side), hand.points


def progress_on_screen(screen: TableScreen, table: DomainTable) -> str | None:
    """The hand's progress drawn in the status lines, each on one line of the 80
    columns: in the auction the standing high bid (or none) and, on the player's turn,
    the lowest legal bid; in a bargaining session the lowest offer and highest ask the
    player may say; in play the declarer side's points against the contract. Which of
    them was checked."""
    view = screen.view
    lines = [line.rstrip() for line in rendered(screen.query_one("#status"))]
    legal = view.get("legal") or []
    if view["phase"] == "bidding" and "auction" in view:
        standing = [e for e in view["auction"] if e[1]]
        if standing:
            seat, points, trump = standing[-1]
            high = f"Highest bid: {points} {suit_label(trump, view['game']).plain} by {table.names[seat]}"
        else:
            high = "No bid yet"
        assert any(high in line for line in lines), (high, lines)
        bids = [c["points"] for c in legal if c["type"] == "bid"]
        if bids:
            assert any(f"you may bid from {min(bids)}" in line for line in lines), (min(bids), lines)
        return "auction"
    if view["phase"] == "bargaining" and view.get("to_act") == view["seat"]:
        pays = [c["amount"] for c in legal if c.get("action") == "pay"]
        sells = [c["amount"] for c in legal if c.get("action") == "sell"]
        if pays:
            assert any(f"you may offer from {min(pays)}" in line for line in lines), (min(pays), lines)
        if sells:
            assert any(f"you may ask up to {max(sells)}" in line for line in lines), (max(sells), lines)
        return "bargain" if pays or sells else None
    side = side_points_of(table)
    if side is not None:
        taken, contract = side
        said = f"Declarer's side: {taken} point{'' if taken == 1 else 's'} of {contract}"
        assert any(said in line for line in lines), (said, lines)
        return f"side {taken}"
    return None


async def play_a_hand(pilot: Any, app: Shown, screen: TableScreen, table: DomainTable,
                      choose: Callable[[list[dict[str, Any]]], int],
                      seen: list[str] | None = None) -> set[str]:
    """The client's seat from the keyboard until the hand is over: the discard selected
    with space, cards with the arrows and enter, the rest from the commands (``m``), the
    entry ``choose`` picks. What was done, by the command's type; ``seen``: the progress
    checked on the screen at each turn (``progress_on_screen``)."""
    hand = screen.query_one(HandBar)
    done: set[str] = set()
    for _ in range(400):
        if table.to_act() != table.seat:
            return done
        if seen is not None and (checked := progress_on_screen(screen, table)) is not None:
            seen.append(checked)
        version, sent = screen.view["version"], len(screen.stream.sent)  # type: ignore[union-attr]
        step = screen.current_step()
        if step is not None:  # the kitty in the hand: select the count, then enter
            for card in table.rng.sample(step["from"], step["count"]):
                await press_card(pilot, hand, card)
                await pilot.press("space")
            assert len(hand.selected) == step["count"]
            await pilot.press("enter")
            done.add("discard, keeping " + " ".join(step["take"]) if step.get("take") else "discard")
        elif screen.moves.plays:
            card = table.rng.choice(sorted(screen.moves.plays))
            ways = len(screen.moves.plays[card])
            await press_card(pilot, hand, card)
            await pilot.press("enter")
            if ways > 1:  # the Joker: which suit it names
                await pick(pilot, app, 0)
            done.add("play")
        else:
            menu = screen.moves.menu
            chosen = choose(menu)
            await pilot.press("m")
            if menu[chosen]["type"] == "call_friend" and len(menu) <= board.MENU_LIMIT:
                # by the card's name: typed, as a player finds it in a list short enough
                await until(pilot, lambda: isinstance(app.screen, Choose), "the list")
                await pilot.press(*menu[chosen]["label"], "enter")
                done.add("typed")
            else:
                done |= await walk_to(pilot, app, menu[chosen])
            if "count" in menu[chosen]:  # a step to select in the hand (mighty-3's kitty take)
                taken = menu[chosen]
                await until(pilot, lambda taken=taken: screen.current_step() == taken, "the step")  # type: ignore[misc]
                done.add("take")
                continue
            done.add(str(menu[chosen]["type"]))
        await until(pilot, lambda sent=sent: len(screen.stream.sent) > sent, "the command")  # type: ignore[union-attr,misc]
        await until(pilot, lambda version=version: screen.view["version"] != version, "the next view")  # type: ignore[misc]
    raise AssertionError("the hand did not end")


def declaring(menu: list[dict[str, Any]]) -> int:
    """Bid (the lowest bid, so the seat declares), keep some kitty cards, call a friend
    (one of the first calls), go on bargaining; else the first entry."""
    for wanted in ("bid", "call_friend"):
        found = [i for i, c in enumerate(menu) if c["type"] == wanted]
        if found:
            return found[0] if wanted == "bid" else found[len(found) // 2]
    takes = [i for i, c in enumerate(menu) if c.get("take")]
    if takes:
        return takes[-1]
    goes_on = [i for i, c in enumerate(menu) if c.get("action") == "continue"]
    return goes_on[0] if goes_on else 0


@pytest.mark.parametrize(("variant", "seed", "expected", "progress"), [
    ("mighty-5", 3, {"bid", "discard", "call_friend", "typed", "play"}, {"auction", "side"}),
    ("mighty-3", 4, {"bid", "take", "play", "call_friend"}, {"auction", "side"}),
    ("mighty-7", 6, {"bid", "discard", "call_friend", "play", "narrowed"}, {"auction", "side"}),
    ("mighty-8", 5, {"bid", "discard", "call_friend", "play", "narrowed"}, {"auction", "side"}),
    ("mitigati", 7, {"bargain", "declare", "play"}, {"bargain"}),
    ("mitigati", 1, {"discard", "declare", "play"}, set()),  # the client deals: the dealer's discard
])
def test_every_phase_of_a_hand_from_the_keyboard_at_80_by_24(variant: str, seed: int, expected: set[str],
                                                              progress: set[str]) -> None:
    app, table = start(variant, seed)

    async def drive() -> None:
        async with app.run_test(size=SMALL) as pilot:
            screen = await attach(pilot, app)
            seen: list[str] = []
            done = await play_a_hand(pilot, app, screen, table, declaring, seen)
            assert expected <= {d.split(",")[0] for d in done} | done, done
            # the progress lines were on the screen with the right figures, and the declarer
            # side's points moved as tricks were taken
            assert {s.split()[0] for s in seen} == progress, seen
            if "side" in progress:
                assert len({s for s in seen if s.startswith("side")}) > 1, seen
            await pilot.pause()
            # the hand is over: its last trick and its result, both on the screen
            assert screen.view["phase"] in ("finished", "abandoned")
            trick = "\n".join(rendered(screen.query_one("#trick")))
            result = "\n".join(rendered(screen.query_one("#result")))
            assert "Last trick" in trick and "Hand result" in result, (trick, result)
            for name in table.names:
                assert name in result
            for widget in ("#trick", "#result"):
                assert on_screen(app, screen.query_one(widget), SMALL), widget

    asyncio.run(drive())


def test_the_auction_shows_the_standing_bid_its_bidder_the_lowest_bid_and_the_passes() -> None:
    """mighty-7, the others bidding as they like before the player's turn: the standing
    bid and its bidder as the domain holds them, the lowest bid the player's commands
    allow, and the bids and passes said, each on one line of the 80×24 screen."""
    table = DomainTable("mighty-7", 8, prefer=())
    table.others_play()
    app = Shown(table)
    bidding = table.state.hand
    assert isinstance(bidding, Bidding) and bidding.standing is not None
    seat, points, trump = bidding.standing

    async def drive() -> None:
        async with app.run_test(size=SMALL) as pilot:
            screen = await attach(pilot, app)
            lines = [line.rstrip() for line in rendered(screen.query_one("#status"))]
            high = f"Highest bid: {points} {suit_label(trump, 'mighty-7').plain} by {table.names[seat]}"
            lowest = min(c["points"] for c in screen.view["legal"] if c["type"] == "bid")
            assert any(high in line and f"you may bid from {lowest}" in line for line in lines), lines
            said = next(line for line in lines if line.startswith("Bids so far:"))
            passed = [table.names[s] for s, bid, _ in screen.view["auction"] if not bid]
            assert passed and all(f"{name} passes" in said for name in passed), (passed, said)
            assert on_screen(app, screen.query_one("#status"), SMALL)

    asyncio.run(drive())


def test_too_many_commands_are_narrowed_by_kind_then_suit_then_card() -> None:
    """mighty-8's friend calls (two cards of two packs: thousands of entries) are reached
    in three short lists, every entry in exactly one group at each step."""
    table = DomainTable("mighty-8", 5)
    table.others_play()
    entries = [c for c in table.view()["legal"] if c["type"] == "bid"]
    table.send(0, entries[0])
    table.others_play()
    step = table.view()["legal"][0]
    table.send(0, {"type": "discard", "cards": step["from"][: step["count"]]})
    table.others_play()
    menu = board.moves(table.view()).menu
    assert len(menu) > 1000
    kinds = board.narrowing(menu, "mighty-8")
    assert kinds is not None and [len(g) for _, g in kinds] == [4, len(menu) - 4]
    calls = kinds[1][1]
    suits = board.narrowing(calls, "mighty-8")
    assert suits is not None and sum(len(g) for _, g in suits) == len(calls) and len(suits) <= board.MENU_LIMIT
    assert [text.split(" (")[0] for text, _ in suits[:4]] == ["spades", "hearts", "diamonds", "clubs"]
    cards = board.narrowing(suits[0][1], "mighty-8")
    assert cards is not None and cards[0][0].startswith("A♠¹  ace of spades (pack 1)")
    last = cards[0][1]
    while (more := board.narrowing(last, "mighty-8")) is not None:
        last = more[0][1]
    assert 0 < len(last) <= board.MENU_LIMIT and all(e["friend"][0] == "AS#1" for e in last)


def test_the_lobby_fits_its_six_columns_in_80_columns(tmp_path: Path) -> None:
    long = "W" * 40
    tables = [{"table": f"t{n}", "name": f"{long}{n}", "game": game, "status": "open", "hands": 10,
               "hands_played": 0, "created": f"2024-01-01T00:00:0{n}Z",
               "seats": [{"seat": s, "player": f"p{s}", "name": f"Player number {s}", "bot": None}
                         for s in range(seats)]}
              for n, (game, seats) in enumerate([("mighty-8", 8), ("mitigati", 3), ("mighty-3-short", 3)])]

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/games"):
            return httpx.Response(200, json={"games": catalogue("en")})
        return httpx.Response(200, json={"tables": tables})

    config = tmp_path / "play.json"
    session.save(config, "http://gateway.test", {"player": "p1", "name": "Ana", "token": "t1"})
    app = PlayApp("http://gateway.test", config=config)
    app.api = Api("http://gateway.test", transport=httpx.MockTransport(answer))

    async def drive() -> None:
        from textual.widgets import DataTable

        async with app.run_test(size=SMALL) as pilot:
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            listing = app.screen.query_one("#tables", DataTable)
            await until(pilot, lambda: listing.row_count == 3, "the tables")
            await pilot.pause(0.3)
            assert listing.virtual_size.width <= listing.size.width, (listing.virtual_size, listing.size)
            lines = rendered(listing)
            for column in ("Table", "Game", "Status", "Seats", "Players", "Hands"):
                assert column in lines[0], lines[0]
            assert any("Mighty (8 pla" in line for line in lines), lines  # the catalogue's name, cut to fit
            assert any("…" in line for line in lines) and all("0/10" in line for line in lines[1:4]), lines

    asyncio.run(drive())


def test_many_amounts_are_narrowed_by_tens() -> None:
    """Mitigati's bargaining: pass, go on, or one of some 130 amounts to pay or ask."""
    table = DomainTable("mitigati", 7)
    table.others_play()
    menu = board.moves(table.view()).menu
    assert len(menu) > 200 and {c["type"] for c in menu} == {"bargain"}
    actions = board.narrowing(menu, "mitigati")
    assert actions is not None and [len(g) for _, g in actions][:2] == [1, 1]
    paying = next(g for _, g in actions if g[0].get("action") == "pay")
    tens = board.narrowing(paying, "mitigati")
    assert tens is not None and tens[0][0] == "1–10" and len(tens[0][1]) == 10
    assert sum(len(g) for _, g in tens) == len(paying) and len(tens) <= board.MENU_LIMIT
    assert board.narrowing(tens[0][1], "mitigati") is None


def test_a_whole_mighty_hand_from_the_keyboard_in_finnish() -> None:
    """The pilot in Finnish: the catalogue, the views' labels and the client's own words
    all in Finnish (the language a player picks with ``--lang fi``), every phase played."""
    register(catalogue("fi"))
    use("fi")
    try:
        table = DomainTable("mighty-5", 3, lang="fi")
        table.others_play()
        app = Shown(table)

        async def drive() -> None:
            async with app.run_test(size=SMALL) as pilot:
                screen = await attach(pilot, app)
                done = await play_a_hand(pilot, app, screen, table, declaring)
                assert {"bid", "discard", "call_friend", "play"} <= {d.split(",")[0] for d in done} | done, done
                await pilot.pause()
                trick = "\n".join(rendered(screen.query_one("#trick")))
                result = "\n".join(rendered(screen.query_one("#result")))
                assert "Viimeinen tikki" in trick and "Jaon tulos" in result, (trick, result)
                assert "Last trick" not in trick and "Hand result" not in result

        asyncio.run(drive())
    finally:
        use("en")

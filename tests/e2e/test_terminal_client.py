"""``mighty play`` end to end: the Textual app driven by its test pilot (key presses only)
against the real gateway, projection workers and redis-server, over the public API.

The four other seats of the mighty-5 table are guest players of ``tests.e2e.others``
sending a random legal command of their views over HTTP (moves the test chooses, which
the bot worker's would not be; the stack runs none); they pass in the auction, so the
client under test becomes the declarer and plays every phase from the keyboard: the bid, the discard, the friend call, the tricks.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from clients.terminal import board
from clients.terminal.app import PlayApp
from clients.terminal.cards import spoken
from clients.terminal.dialogs import Choose, Figures
from clients.terminal.hand import HandBar
from clients.terminal.lobby import LobbyScreen
from clients.terminal.replay import ReplayScreen
from clients.terminal.table import TableScreen
from clients.terminal.words import said
from tests.e2e.others import Others
from tests.fixtures.hostile_names import HOSTILE_NAMES, HOSTILE_TABLE_NAMES

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


async def until(pilot: Any, ok: Callable[[], bool], what: str, timeout_s: float = 30) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not ok():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


@pytest.fixture
def others(service: str) -> Iterator[Others]:
    """Four guests at the gateway of the module's service (tests/e2e/conftest.py)."""
    players = Others(service, ["Bo", "Cy", "Di", "Ed"], seed=11, pass_first=True)
    try:
        yield players
    finally:
        players.stop()


async def press_card(pilot: Any, hand: HandBar, card: str) -> None:
    """Move the hand bar's cursor to ``card`` with the arrow keys."""
    target = hand.cards.index(card)
    key = "right" if target > hand.cursor else "left"
    for _ in range(abs(target - hand.cursor)):
        await pilot.press(key)
    assert hand.current == card


async def choose(pilot: Any, app: PlayApp, command: dict[str, Any], game: str) -> None:
    """In the open menu, type the command's name to filter it to the top, then enter; a
    menu too long to list (Mitigati's bargaining) comes in steps: the group holding it."""
    while True:
        await until(pilot, lambda: isinstance(app.screen, Choose), "the menu")
        listed = app.screen
        assert isinstance(listed, Choose)
        values = [value for _, value in listed.choices]
        if not any(isinstance(value, list) for value in values):
            break
        index = next(i for i, value in enumerate(values) if isinstance(value, list) and command in value)
        await pilot.press("down", *["down"] * index, "enter")
        await until(pilot, lambda listed=listed: app.screen is not listed, "the next list")  # type: ignore[misc]
    await pilot.press(*said(command, game))  # the menu names an entry by its label
    await pilot.press("enter")


async def my_turns(pilot: Any, app: PlayApp, screen: TableScreen, rng: random.Random, done: set[str], *,
                   try_illegal: bool = False, drop_after_tricks: int | None = None,
                   prefer: tuple[dict[str, Any], ...] = ()) -> None:
    """Play the client's seat from the keyboard until the first hand is scored; ``done``
    collects what was done (the command types, ``refused``, ``dropped``). ``prefer``:
    menu commands taken whenever one is legal."""
    hand = screen.query_one(HandBar)
    game = str(screen.view.get("game"))
    while True:
        await until(pilot, lambda: screen.view.get("hands_scored", 0) >= 1
                    or (screen.view.get("to_act") == screen.view.get("seat") and bool(screen.view.get("legal"))),
                    "my turn or the end of the hand")
        view = screen.view
        if view.get("hands_scored", 0) >= 1:
            return
        version, moves, refused = view["version"], screen.moves, len(screen.refusals)
        if moves.discard is not None:  # the kitty is in the hand: select the count, then enter
            for card in rng.sample(moves.discard["from"], moves.discard["count"]):
                await press_card(pilot, hand, card)
                await pilot.press("space")
            assert len(hand.selected) == moves.discard["count"]
            await pilot.press("enter")
            done.add("discard")
        elif moves.plays:
            illegal = [c for c in view["hand"] if c not in moves.plays]
            if try_illegal and illegal and "refused" not in done:
                # a dimmed card can still be tried: the gateway refuses it, in words
                await press_card(pilot, hand, illegal[0])
                await pilot.press("enter")
                await until(pilot, lambda: bool(screen.refusals), "the refusal")
                assert screen.view["version"] == version and screen.view["hand"] == view["hand"]
                assert any("Refused" in line for line in screen.logged)
                done.add("refused")
                continue
            card = rng.choice(sorted(moves.plays))
            await press_card(pilot, hand, card)
            await pilot.press("enter")
            if len(moves.plays[card]) > 1:  # the Joker: which suit it names
                await until(pilot, lambda: isinstance(app.screen, Choose), "the joker's choices")
                await pilot.press("enter")
            done.add("play")
        else:
            kinds = {c["type"] for c in moves.menu}
            preferred = [c for c in moves.menu if c in prefer]
            if preferred:
                command = rng.choice(preferred)
            elif "bid" in kinds:
                command = rng.choice([c for c in moves.menu if c["type"] == "bid"])
            elif "call_friend" in kinds:
                command = rng.choice([c for c in moves.menu if c["type"] == "call_friend"])
            else:
                command = rng.choice(moves.menu)
            done.add(command["type"])
            await pilot.press("m")
            await choose(pilot, app, command, game)
        await until(pilot, lambda v=version: screen.view["version"] > v, "the command's effect")
        assert len(screen.refusals) == refused, screen.refusals  # only the one tried on purpose
        tricks = len(board.state(screen.view).get("tricks") or ())
        if drop_after_tricks is not None and "dropped" not in done and tricks >= drop_after_tricks:
            await pilot.press("ctrl+r")  # the socket drops; the stream resumes after the last version
            stream = screen.stream
            assert stream is not None
            await until(pilot, lambda s=stream: s.connects >= 2, "the reconnection")
            done.add("dropped")


def test_login_quick_play_and_a_whole_mighty_5_hand_from_the_keyboard_with_a_drop_and_a_replay(
        service: str, others: Others, tmp_path: Path) -> None:
    asyncio.run(_a_whole_hand(service, others, tmp_path))


async def _a_whole_hand(url: str, others: Others, tmp_path: Path) -> None:
    rng = random.Random(5)
    app = PlayApp(url, name="Keys", config=tmp_path / "play.json", wait_seconds=20)
    async with app.run_test(size=(130, 45)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby after logging in")
        assert (tmp_path / "play.json").exists() and app.player
        await pilot.press("q")  # quick play, mighty-5 first in the list
        await until(pilot, lambda: isinstance(app.screen, Choose), "the games")
        await pilot.press("enter")  # while the four others ask for the same
        table = await asyncio.to_thread(others.quickplay, "mighty-5", 20)
        await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table screen")
        screen = app.screen
        assert isinstance(screen, TableScreen) and screen.table == table
        others.play(table)
        done: set[str] = set()
        await my_turns(pilot, app, screen, rng, done, try_illegal=True, drop_after_tricks=3)
        assert {"bid", "discard", "call_friend", "play", "refused", "dropped"} <= done, done
        await until(pilot, lambda: any("Hand result" in line for line in screen.logged), "the hand's result")
        stream = screen.stream
        assert stream is not None
        assert stream.received == sorted(set(stream.received)), "a view came twice or out of order"
        others.stop()
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {app.api.token}"}) as http:
            assert (await http.get(f"/api/v1/tables/{table}/verify")).json()["ok"] is True
            latest = (await http.get(f"/api/v1/tables/{table}/view")).json()
        # nothing missed across the drop: the screen holds the view the HTTP API gives now
        await until(pilot, lambda: screen.view["version"] >= latest["version"], "the latest view")
        assert screen.view == latest

        # the match ledger: hand 1's scores as the hands list has them
        async with httpx.AsyncClient(base_url=url) as http:
            scored = (await http.get(f"/api/v1/tables/{table}/hands")).json()["hands"][0]["scores"]
            for _ in range(300):  # the ledger worker is a step behind
                if (await http.get(f"/api/v1/tables/{table}/ledger")).json()["hands"]:
                    break
                await pilot.pause(0.05)
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, Figures), "the ledger")
        ledger = app.screen
        assert isinstance(ledger, Figures)
        assert ledger.rows[0] == [1, *scored] and ledger.rows[-1][0] == "Total"
        await pilot.press("escape")

        # the replay of hand 1, as the client's own seat: step with the arrows
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, Choose), "the hands to replay")
        await pilot.press("enter")  # hand 1
        await until(pilot, lambda: isinstance(app.screen, Choose) and "as" in app.screen.title_text, "the readers")
        await pilot.press("enter")  # as my seat
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay")
        replay = app.screen
        assert isinstance(replay, ReplayScreen) and replay.reader == str(screen.seat)
        assert replay.steps[0]["type"] == "deal" and replay.index == 0
        await pilot.press("end")
        last = len(replay.steps) - 1
        assert replay.index == last
        await pilot.press("left", "left", "right")
        assert replay.index == last - 1
        played = replay.steps[last]["view"]["tricks"][-1]["cards"][-1]
        await pilot.press("right")
        # the step as the server says it: the last card played, by its name
        where = str(replay.query_one("#where").render())
        assert replay.steps[last]["label"] in where and spoken(played, "mighty-5") in where
        await pilot.press("home")
        assert replay.index == 0
        await pilot.press("escape")
        assert app.screen is screen

        # the review of the hand (r): the audit replay, every hand open, the played cards
        # struck with the trick each went to
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen), "the review")
        review = app.screen
        assert isinstance(review, ReplayScreen) and review.steps[-1]["view"].get("played")
        await pilot.press("end")
        cards = review.query_one("#cards").render()
        text = str(cards)
        assert "→10" in text and "→×" in text, text  # the tenth trick; the declarer's buried cards
        for name in screen.names:
            assert f"{name}: " in text
        await pilot.press("escape")
        assert app.screen is screen


def test_a_hint_from_the_keyboard_at_a_table_that_allows_them(service: str, others: Others, tmp_path: Path) -> None:
    asyncio.run(_a_hint(service, others, tmp_path))


async def _a_hint(url: str, others: Others, tmp_path: Path) -> None:
    app = PlayApp(url, name="Learner", config=tmp_path / "play.json")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {app.api.token}"}) as http:
            made = await http.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0, "hints": True,
                                                           "rated": False, "turn_seconds": 600})
            assert made.status_code == 201, made.text
        table = made.json()["table"]
        others.join(table)
        app.open_table(table, seat=0)
        await until(pilot, lambda: isinstance(app.screen, TableScreen) and bool(app.screen.view), "the table")
        screen = app.screen
        assert isinstance(screen, TableScreen)
        others.play(table)
        await until(pilot, lambda: screen.view.get("to_act") == 0 and bool(screen.view.get("legal")), "my turn")
        await pilot.press("h")
        await until(pilot, lambda: any(line.startswith("A bot would play: ") for line in screen.logged), "the hint")
        hint = next(line for line in screen.logged if line.startswith("A bot would play: "))
        labels = [entry["label"] for entry in screen.view["legal"]]
        assert hint.removeprefix("A bot would play: ") in labels, (hint, labels)
        assert not screen.refusals


def test_the_lobby_creates_a_table_with_bots_lists_it_and_watches_another_as_a_spectator(
        service: str, others: Others, tmp_path: Path) -> None:
    asyncio.run(_the_lobby(service, others, tmp_path))


async def _the_lobby(url: str, others: Others, tmp_path: Path) -> None:
    async with httpx.AsyncClient(base_url=url) as http:  # four guests and a bot at a table to watch
        made = await http.post("/api/v1/tables", json={"game": "mighty-5", "seat": None, "name": "watched",
                                                       "bots": {"4": "beginner"}},
                               headers=others.headers(others.players[0]))
        assert made.status_code == 201, made.text
    watched = made.json()["table"]
    others.join(watched)
    app = PlayApp(url, name="Looker", config=tmp_path / "play.json")
    async with app.run_test(size=(130, 45)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, Choose), "the games")
        await pilot.press(*"mighty-4", "enter")
        await until(pilot, lambda: isinstance(app.screen, TableScreen), "the new table")
        table = app.screen
        assert isinstance(table, TableScreen) and table.seat == 0
        await until(pilot, lambda: table.view.get("phase") == "bidding" and len(table.names) == 4,
                    "the table to start with its bots")
        # each bot its own name, its level beside it
        assert all(name.endswith(" · beginner bot") for name in table.names[1:])
        assert len(set(table.names[1:])) == 3
        assert table.view["hand"] and len(table.view["hand"]) == table.view["hand_sizes"][0]
        await pilot.press("escape")
        lobby = app.screen
        assert isinstance(lobby, LobbyScreen)
        listing = lobby.query_one("#tables")

        def listed(table_id: str) -> bool:
            return any(key.value == table_id for key in listing.rows)  # type: ignore[attr-defined]

        await pilot.press("r")
        await until(pilot, lambda: listed(table.table) and listed(watched), "both tables in the lobby")
        row = listing.get_row_index(watched)  # type: ignore[attr-defined]
        await pilot.press("home", *["down"] * row)
        await pilot.press("w")
        await until(pilot, lambda: isinstance(app.screen, TableScreen) and app.screen.table == watched
                    and bool(app.screen.view), "the watched table")
        spectator = app.screen
        assert isinstance(spectator, TableScreen)
        assert spectator.view["seat"] is None and spectator.view["hand"] is None
        assert not spectator.query_one(HandBar).display
        assert "Watching as a spectator." in str(spectator.query_one("#prompt").render())
        first = app.player

    # a restart without --name resumes as the same guest, and joining its table gives the seat back
    again = PlayApp(url, config=tmp_path / "play.json")
    async with again.run_test(size=(130, 45)) as pilot:
        await until(pilot, lambda: isinstance(again.screen, LobbyScreen), "the lobby again")
        assert again.player == first and again.player_name == "Looker"
        listing = again.screen.query_one("#tables")
        await until(pilot, lambda: any(k.value == table.table for k in listing.rows),  # type: ignore[attr-defined]
                    "the table in the lobby")
        row = listing.get_row_index(table.table)  # type: ignore[attr-defined]
        await pilot.press("home", *["down"] * row, "j")
        await until(pilot, lambda: isinstance(again.screen, TableScreen) and bool(again.screen.view), "the seat")
        back = again.screen
        assert isinstance(back, TableScreen) and back.view["seat"] == 0 and back.view["hand"]


def test_a_mitigati_hand_from_the_keyboard_bargaining_declaring_and_playing(service: str, tmp_path: Path) -> None:
    asyncio.run(_a_mitigati_hand(service, tmp_path))


async def _a_mitigati_hand(url: str, tmp_path: Path) -> None:
    others = Others(url, ["Bo", "Cy"], seed=3)
    try:
        app = PlayApp(url, name="Tarot", config=tmp_path / "play.json", wait_seconds=20)
        async with app.run_test(size=(130, 45)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            await pilot.press("q")
            await until(pilot, lambda: isinstance(app.screen, Choose), "the games")
            await pilot.press(*"mitigati", "enter")
            table = await asyncio.to_thread(others.quickplay, "mitigati", 20)
            await until(pilot, lambda: isinstance(app.screen, TableScreen) and bool(app.screen.view),
                        "the mitigati table")
            screen = app.screen
            assert isinstance(screen, TableScreen) and screen.table == table and screen.view["game"] == "mitigati"
            others.play(table)
            done: set[str] = set()
            # the client always says continue (docs/rules/mitigati.md, "Bargaining"), so the deal goes on to the play
            await my_turns(pilot, app, screen, random.Random(8), done,
                           prefer=({"type": "bargain", "action": "continue"},))
            assert {"bargain", "declare", "play"} <= done, done
            await until(pilot, lambda: any("Hand result" in line for line in screen.logged), "the hand's result")
    finally:
        others.stop()


def rendered(widget: Any) -> list[str]:
    """The lines a widget draws on the screen now, as text."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


def test_the_lobby_and_a_table_show_every_hostile_name_as_written_and_markup_does_nothing(
        service: str, tmp_path: Path) -> None:
    asyncio.run(_hostile_names(service, tmp_path))


async def _hostile_names(url: str, tmp_path: Path) -> None:
    players: list[dict[str, Any]] = []
    tables: dict[str, tuple[str, str]] = {}  # table id -> (its name, the name of the player seated)
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        for name in HOSTILE_NAMES:
            made = await http.post("/api/v1/players", json={"name": name})
            assert made.status_code == 201 and made.json()["name"] == name, made.text
            players.append(made.json())
        for n, table_name in enumerate(HOSTILE_TABLE_NAMES):
            owner = players[n % len(players)]
            made = await http.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0, "name": table_name},
                                   headers={"Authorization": f"Bearer {owner['token']}"})
            assert made.status_code == 201, made.text
            tables[made.json()["table"]] = (table_name, owner["name"])
        # a table the hostile names play at: the first five, a seat each
        seated = players[:5]
        made = await http.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0, "name": "seated"},
                               headers={"Authorization": f"Bearer {seated[0]['token']}"})
        assert made.status_code == 201, made.text
        played = made.json()["table"]
        for seat, guest in enumerate(seated[1:], start=1):
            joined = await http.post(f"/api/v1/tables/{played}/join", json={"seat": seat},
                                     headers={"Authorization": f"Bearer {guest['token']}"})
            assert joined.status_code == 200, joined.text

    app = PlayApp(url, name="[/x]", config=tmp_path / "play.json")
    async with app.run_test(size=(220, 120)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        lobby = app.screen
        listing = lobby.query_one("#tables")
        await until(pilot, lambda: {k.value for k in listing.rows} >= set(tables),  # type: ignore[attr-defined]
                    "every hostile table in the lobby")
        assert "Playing as [/x] (guest) at" in str(lobby.query_one("#who").render())

        def misshown() -> list[tuple[str, str]]:
            """The tables whose row does not show the table's and the player's name as written."""
            lines = rendered(listing)
            wrong = []
            for table, (table_name, player_name) in tables.items():
                row = listing.get_row_index(table)  # type: ignore[attr-defined]
                assert 1 + row < len(lines), "the row is off the screen: make the test's screen taller"
                line = lines[1 + row]  # under the header
                if not (line[1:].startswith(table_name + " ") and f" {player_name}, ·" in line):
                    wrong.append((table_name, line.rstrip()))
            return wrong

        try:  # the columns take their width once the rows are drawn
            await until(pilot, lambda: not misshown(), "every name shown as written", timeout_s=10)
        except AssertionError:
            raise AssertionError(misshown()) from None

        # a click on the name that is Textual markup for "quit": nothing but a selected row
        clicked = listing.get_row_index(next(t for t, (n, _) in tables.items()  # type: ignore[attr-defined]
                                             if n == "[@click=app.quit]x[/]"))
        await pilot.click("#tables", offset=(1, 1 + clicked))
        await pilot.click("#tables", offset=(2, 1 + clicked))
        await pilot.pause(0.2)
        assert app.is_running and app.return_code is None and app.screen is lobby

        # the table of five hostile names, watched: each shown as written around it
        listing.move_cursor(row=listing.get_row_index(played))  # type: ignore[attr-defined]
        await pilot.press("w")
        await until(pilot, lambda: isinstance(app.screen, TableScreen) and app.screen.table == played
                    and bool(app.screen.view) and len(app.screen.names) == 5, "the watched table")
        table_screen = app.screen
        assert isinstance(table_screen, TableScreen)
        await pilot.pause()
        around = rendered(table_screen.query_one("#seats"))
        for seat, guest in enumerate(seated):
            assert any(line.lstrip(" ▶").startswith(guest["name"] + " ") for line in around[1:]), (
                seat, guest["name"], around)
        await until(pilot, lambda: app.screen is table_screen, "no crash")

"""The terminal client's table screen drawn from view documents recorded from a gateway
(tests/fixtures/terminal/), with no network: what the seats, the hand bar and the result
show, and the words and card symbols it uses."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from textual.app import App

from clients.terminal import board, session
from clients.terminal.cards import label, plain, sort_hand
from clients.terminal.hand import HandBar
from clients.terminal.replay import audit_hands
from clients.terminal.table import TableScreen
from clients.terminal.words import describe, said

FIXTURES = Path(__file__).parent.parent / "fixtures" / "terminal"


def recorded(name: str) -> tuple[dict[str, Any], list[str]]:
    doc = json.loads((FIXTURES / name).read_text())
    return doc["view"], [s["name"] for s in doc["table"]["seats"]]


def test_the_recorded_play_view_marks_only_the_legal_cards_and_shows_the_trick_around_the_table() -> None:
    view, names = recorded("mighty5_play.json")
    moves = board.moves(view)
    assert moves.cards == {"5D", "6D", "JK"} and moves.discard is None and moves.menu == []
    rows = {r[0].plain.strip(" ▶"): [cell.plain for cell in r[1:]] for r in board.seat_rows(view, names)}
    assert rows["Cy"][:3] == ["declarer", "20 NT", "Q♦ (led)"]
    assert rows["Di"][:3] == ["dealer", "15 NT", "7♦"] and rows["Ed"][1:3] == ["19 ♦", "A♠"]
    assert rows["Me (you)"][1:3] == ["20 ♦", ""] and rows["Bo"][1] == "pass"
    assert [r[5] for r in rows.values()] == ["10", "10", "9", "9", "9"]
    status = board.status(view, names).plain
    assert "Your turn" in status and "Contract: Cy 20 NT" in status and "Friend call: J♠" in status
    assert "Kitty: Q♦ 2♣ 4♣" in status and "Lead advice: ♣" in status and "Discarded" not in status  # only the declarer sees them
    assert board.prompt(view, moves) == "←/→ and enter play a card"


def test_the_recorded_finished_view_shows_the_result_the_point_cards_and_the_totals() -> None:
    view, names = recorded("mighty5_finished.json")
    text = board.result(view, names)
    assert text is not None
    assert "contract failed (declarer's side took 9 points)" in text.plain
    assert "Scores: Me +8, Bo +8, Cy -16, Di -8, Ed +8" in text.plain
    rows = board.seat_rows(view, names)
    declarer, friend = view["declarer"], view["friend"]
    assert rows[declarer][1].plain == "declarer" and rows[friend][1].plain == "friend dealer"
    defenders = [s for s in range(5) if s not in (declarer, friend)]
    for seat in defenders:  # docs/rules/mighty.md §5: the defenders' point cards lie face up
        shown = rows[seat][5].plain.split()
        assert len(shown) == view["face_up_points"][seat]
    assert sum(len(rows[s][5].plain.split()) for s in defenders) == 20 - view["declarer_side_points"]
    assert rows[declarer][5].plain == "" and [r[7].plain for r in rows] == [str(t) for t in view["totals"]]


def test_the_table_screen_draws_a_recorded_view_with_the_hand_sorted_by_suit_and_the_rest_dimmed() -> None:
    view, names = recorded("mighty5_play.json")

    class Shown(App[None]):
        def on_mount(self) -> None:
            self.push_screen(TableScreen(view["table"], seat=0, follow=False))

    async def draw() -> None:
        app = Shown()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, TableScreen)
            screen.show_view(view, names)
            await pilot.pause()
            hand = screen.query_one(HandBar)
            assert [plain(c) for c in hand.cards] == ["8♠", "4♠", "3♠", "2♠", "8♥", "10♣", "9♣", "6♦", "5♦", "Jkr"]
            assert hand.has_focus and hand.current == "6D"  # the cursor starts on a playable card
            drawn = hand.render()
            dimmed = {drawn.plain[s.start:s.end] for s in drawn.spans if "dim" in str(s.style)}
            assert dimmed == {plain(c) for c in view["hand"] if c not in ("5D", "6D", "JK")}
            await pilot.press("right")
            assert hand.current == "5D"
            seats = screen.query_one("#seats")
            assert seats.row_count == 5  # type: ignore[attr-defined]
            assert [line for line in screen.logged if " plays " in line] == \
                ["Cy plays Q♦", "Di plays 7♦", "Ed plays A♠"]

    asyncio.run(draw())


def test_cards_sort_by_suit_high_to_low_with_the_trump_first_and_mitigatis_own_orders() -> None:
    assert sort_hand(["2S", "JK", "AH", "TS", "3C", "KD"]) == ["TS", "2S", "AH", "3C", "KD", "JK"]
    assert sort_hand(["2S", "AH", "TS", "3C"], trump="C") == ["3C", "TS", "2S", "AH"]
    assert plain("KH#2") == "K♥²" and plain("JK3") == "Jkr³" and plain("TD") == "10♦"
    # docs/rules/mitigati.md, "The cards": T20 above T21; in coins and cups the 1 beats the 10
    assert sort_hand(["T1", "T21", "T20", "FOOL", "TD", "1D", "TS", "1S"], "mitigati") == \
        ["T20", "T21", "T1", "FOOL", "1D", "TD", "TS", "1S"]
    assert label("7B", "mitigati").plain == "7‖" and label("QH", dim=True).style == "dim"


def test_commands_read_as_words_in_the_menu() -> None:
    assert describe({"type": "bid", "points": 14, "trump": "H"}) == "Bid 14 ♥ (hearts)"
    assert describe({"type": "play", "card": "JK", "suit": "D"}) == "Play Jkr, naming ♦ (diamonds)"
    assert describe({"type": "play", "card": "3C", "joker_call": True}) == "Play 3♣, calling the Joker"
    assert describe({"type": "call_friend", "friend": "AH", "lead_suit": "S"}) == \
        "Call the friend: the holder of A♥; advise leading ♠"
    assert describe({"type": "call_friend", "friend": ["first_trick", "QH#1"]}) == \
        "Call the friend: the first trick's winner and the holder of Q♥¹"
    assert describe({"type": "bargain", "action": "pay", "amount": 3}) == "Bargain: pay 3"
    assert describe({"type": "declare", "combinations": []}) == "Declare nothing"
    step = {"type": "discard", "count": 3, "from": ["2S", "3S", "4S", "5S"], "take": ["AS"]}
    assert board.discard_command(step, ["2S", "4S", "5S"]) == {"type": "discard", "take": ["AS"],
                                                              "cards": ["2S", "4S", "5S"]}


def test_the_audit_replay_shows_each_seats_cards_left() -> None:
    shown = {"dealt": [["AS", "2S"], ["KH", "3H"]], "tricks": [{"cards": ["AS", "KH"], "winner": 0}],
             "trick": {"leader": 0, "cards": ["2S"]}}
    assert audit_hands(shown) == [[], ["3H"]]


def test_the_guest_is_kept_per_gateway_and_a_broken_file_is_no_guest(tmp_path: Path) -> None:
    path = tmp_path / "mighty" / "play.json"
    assert session.load(path, "http://a") is None
    session.save(path, "http://a", {"player": "p1", "name": "Ana", "token": "t1", "extra": 1})
    session.save(path, "http://b", {"player": "p2", "name": "Bo", "token": "t2"})
    assert session.load(path, "http://a") == {"player": "p1", "name": "Ana", "token": "t1"}
    assert session.load(path, "http://b") == {"player": "p2", "name": "Bo", "token": "t2"}
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    path.write_text("{not json")
    assert session.load(path, "http://a") is None


def test_mitigatis_bargaining_and_declarations_read_as_words_and_the_deadline_counts_down() -> None:
    from datetime import UTC, datetime

    view = {"game": "mitigati", "phase": "bargaining", "seat": 0, "to_act": 0, "hand_no": 1,
            "deadline": "2024-05-01T12:01:05Z",
            "state": {"bargaining": {"session": 2, "payer": 1, "offer": 5, "seller": 2, "ask": 9,
                                     "said": [[1, "pay", 5], [2, "sell", 9], [0, "pass", None]]},
                      "declarations": [{"seat": 1, "name": "kings", "value": 4},
                                       {"seat": 2, "name": "tarocchi", "value": 6, "shown": ["T1", "T21"]}]}}
    text = board.status(view, ["Ana", "Bo", "Cy"], now=datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)).plain
    assert "Your turn  ⏱ 1:05 left" in text
    assert "Bargaining (session 2)  ·  Bo offers 5  ·  Cy asks 9  ·  said: Bo pays 5, Cy sells 9, Ana passes" in text
    assert "Declared: Bo: kings (4); Cy: tarocchi (6) T1 T21" in text


def test_an_unreachable_gateway_stops_the_client_with_the_reason_and_keeps_no_guest(tmp_path: Path) -> None:
    from clients.terminal.app import PlayApp
    from services.redis_runtime import free_port

    app = PlayApp(f"http://127.0.0.1:{free_port()}", name="Ana", config=tmp_path / "play.json")

    async def start() -> None:
        async with app.run_test() as pilot:
            for _ in range(200):
                if app.failure:
                    break
                await pilot.pause(0.02)

    asyncio.run(start())
    assert app.failure is not None and app.failure.startswith("offline: The server at http://127.0.0.1:")
    assert not (tmp_path / "play.json").exists()


def test_a_refusal_a_menu_and_the_ledger_show_a_strangers_text_as_written() -> None:
    """Server text in a notification, a menu's options and the ledger's columns is shown
    literally: no MarkupError, no action made of ``[@click=…]``."""
    from textual.widgets import DataTable, OptionList
    from textual.widgets._toast import Toast

    from clients.terminal.dialogs import Choose, Figures

    view, names = recorded("mighty5_play.json")
    hostile = ["[/x]", "[@click=app.quit]q[/]", "[bold]b", ":smile:", "\\"]

    class Shown(App[None]):
        def on_mount(self) -> None:
            self.push_screen(TableScreen(view["table"], seat=0, follow=False))

    async def draw() -> None:
        app = Shown()
        async with app.run_test(size=(160, 50), notifications=True) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, TableScreen)
            screen.show_view(view, hostile)
            screen._refused("not_your_turn", "[/x] is not [@click=app.quit]yours[/]")
            await pilot.pause()
            toasts = [str(t.render()) for t in app.screen.query(Toast)]
            assert any("[/x] is not [@click=app.quit]yours[/]" in t for t in toasts), toasts
            app.push_screen(Figures("[/x]'s ledger", ["Hand", *hostile], [[1, 2, 3, 4, 5, 6]]))
            await pilot.pause()
            figures = app.screen.query_one(DataTable)
            assert figures.render_line(0).text.split() == ["Hand", *hostile]
            app.pop_screen()
            app.push_screen(Choose("Whose [/x]?", [(name, name) for name in hostile]))
            await pilot.pause()
            options = app.screen.query_one(OptionList)
            assert [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)] == hostile
            drawn = "\n".join(options.render_line(y).text for y in range(options.size.height))
            assert all(name in drawn for name in hostile), drawn
            assert app.is_running

    asyncio.run(draw())


def test_a_legal_entry_reads_as_the_servers_label_and_a_hand_in_the_servers_order() -> None:
    """docs/api.md, "Games, labels and languages": a menu line is the entry's ``label``
    (the client's own words only for a command without one); the hand bar shows the
    view's ``hand_order`` as given."""
    assert said({"type": "bid", "points": 14, "trump": "H", "label": "Bid 14 in hearts"}) == "Bid 14 in hearts"
    assert said({"type": "bid", "points": 14, "trump": "H"}) == "Bid 14 ♥ (hearts)"
    view, names = recorded("mighty5_play.json")
    order = list(reversed(view["hand"]))
    view = {**view, "hand_order": order}

    class Shown(App[None]):
        def on_mount(self) -> None:
            self.push_screen(TableScreen(view["table"], seat=0, follow=False))

    async def draw() -> None:
        app = Shown()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, TableScreen)
            screen.show_view(view, names)
            await pilot.pause()
            assert screen.query_one(HandBar).cards == order

    asyncio.run(draw())

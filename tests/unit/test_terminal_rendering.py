"""The terminal client's table screen drawn from view documents recorded from a gateway
(tests/fixtures/terminal/), with no network: what the seats, the hand bar and the result
show, and the words and card symbols it uses."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from clients.terminal import board, session
from clients.terminal.cards import label, plain, register, sort_hand, spoken
from clients.terminal.hand import HandBar
from clients.terminal.replay import audit_hands, review_lines
from clients.terminal.words import said
from tests.unit.terminal_screens import table_screen
from tests.unit.terminal_tables import catalogue

FIXTURES = Path(__file__).parent.parent / "fixtures" / "terminal"


@pytest.fixture(autouse=True)
def games() -> None:
    """The games catalogue as the client reads it at login (``GET /games``)."""
    register(catalogue("en"))


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
    assert "contract failed (Cy bid 20 NT); the declarer's side took 9 points" in text.plain
    assert "Points taken: Me 0, Bo 0, Cy 9, Di 0, Ed 11" in text.plain
    assert "Scores: Me +8, Bo +8, Cy -16, Di -8, Ed +8" in text.plain
    rows = board.seat_rows(view, names)
    declarer, friend = view["declarer"], view["friend"]
    assert rows[declarer][1].plain == "declarer" and rows[friend][1].plain == "friend dealer"
    # docs/rules/mighty.md §5: the points each seat took, as the server counts them
    assert [r[5].plain for r in rows] == [str(p or "") for p in view["face_up_points"]]
    assert [r[7].plain for r in rows] == [str(t) for t in view["totals"]]


def test_the_table_screen_draws_a_recorded_view_with_the_hand_sorted_by_suit_and_the_rest_dimmed() -> None:
    view, names = recorded("mighty5_play.json")

    async def draw() -> None:
        async with table_screen(view, names, (120, 40)) as (pilot, screen):
            hand = screen.query_one(HandBar)
            assert [plain(c, "mighty-5") for c in hand.cards] == \
                ["8♠", "4♠", "3♠", "2♠", "8♥", "6♦", "5♦", "10♣", "9♣", "JK"]
            assert hand.has_focus and hand.current == "6D"  # the cursor starts on a playable card
            drawn = hand.render()
            dimmed = {drawn.plain[s.start:s.end] for s in drawn.spans if "dim" in str(s.style)}
            assert dimmed == {plain(c, "mighty-5") for c in view["hand"] if c not in ("5D", "6D", "JK")}
            await pilot.press("right")
            assert hand.current == "5D"
            seats = screen.query_one("#seats")
            assert seats.row_count == 5  # type: ignore[attr-defined]
            assert [line for line in screen.logged if " plays " in line] == \
                ["Cy plays Q♦", "Di plays 7♦", "Ed plays A♠"]

    asyncio.run(draw())


def test_cards_are_drawn_and_sorted_as_the_servers_catalogue_says() -> None:
    """``GET /games``: the rank as printed, the suit's glyph, the catalogue's order; the
    client knows no game (a game it was not told of shows its cards by their names)."""
    assert sort_hand(["2S", "JK", "AH", "TS", "3C", "KD"], "mighty-5") == ["TS", "2S", "AH", "KD", "3C", "JK"]
    assert plain("KH#2", "mighty-8") == "K♥²" and plain("KH#1", "mighty-8") == "K♥¹"
    assert plain("TD", "mighty-5") == "10♦" and plain("JK", "mighty-5") == "JK"
    assert spoken("QH", "mighty-5") == "queen of hearts"
    # docs/rules/mitigati.md, "The cards": T20 above T21; in coins and cups the 1 beats the 10
    assert sort_hand(["T1", "T21", "T20", "FOOL", "TD", "1D", "TS", "1S"], "mitigati") == \
        ["T20", "T21", "T1", "FOOL", "1D", "TD", "TS", "1S"]
    assert label("7B", "mitigati").plain == "7‖" and label("KS", "mitigati").plain == "K†"
    assert label("QH", "mighty-5", dim=True).style == "dim"
    assert plain("QH", "a-game-never-heard-of") == "QH" and sort_hand(["QH", "2C"], None) == ["2C", "QH"]


def test_a_command_without_a_label_reads_as_its_type_and_cards() -> None:
    assert said({"type": "discard", "cards": ["2S", "TD"]}, "mighty-5") == "discard 2♠ 10♦"
    step = {"type": "discard", "count": 3, "from": ["2S", "3S", "4S", "5S"], "take": ["AS"]}
    assert board.discard_command(step, ["2S", "4S", "5S"]) == {"type": "discard", "take": ["AS"],
                                                              "cards": ["2S", "4S", "5S"]}


def test_the_audit_replay_shows_each_seats_cards_left() -> None:
    shown = {"dealt": [["AS", "2S"], ["KH", "3H"]], "tricks": [{"cards": ["AS", "KH"], "winner": 0}],
             "trick": {"leader": 0, "cards": ["2S"]}}
    assert audit_hands(shown) == [[], ["3H"]]


def test_the_review_shows_every_hand_open_with_the_played_cards_struck_and_their_tricks() -> None:
    shown = {"remaining": [["2S"], ["3H"]],
             "played": [[{"card": "AS", "trick": 1}, {"card": "4S", "trick": None}], [{"card": "KH", "trick": 1}]]}
    text = review_lines(shown, ["Ana", "Bo"], "mighty-5")
    assert text is not None
    lines = text.plain.split("\n")
    assert lines[1].startswith("Ana: 2♠") and "A♠→1" in lines[1] and "4♠→×" in lines[1]
    assert lines[2].startswith("Bo: 3♥") and "K♥→1" in lines[2]
    struck = [span for span in text.spans if "strike" in str(span.style)]
    assert len(struck) == 3  # the three played cards, and nothing else
    assert review_lines({"hand": ["2S"]}, ["Ana"], "mighty-5") is None  # a seat's replay: no review


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

    async def draw() -> None:
        async with table_screen(view, hostile, (160, 50), notifications=True) as (pilot, screen):
            app = pilot.app
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
    assert said({"type": "bid", "points": 14, "trump": "H"}) == "bid"
    view, names = recorded("mighty5_play.json")
    order = list(reversed(view["hand"]))
    view = {**view, "hand_order": order}

    async def draw() -> None:
        async with table_screen(view, names, (120, 40)) as (pilot, screen):
            assert screen.query_one(HandBar).cards == order

    asyncio.run(draw())


def test_a_trick_card_goes_under_the_seat_the_view_says_played_it() -> None:
    """docs/api.md, "Playing": a trick's ``seats`` place its cards (Mitigati's play goes
    to the right: leader 0, then 2, then 1); only a view without them goes round from the
    leader."""
    view = {"game": "mitigati", "seats": [{"name": n} for n in "ABC"],
            "trick": {"leader": 0, "cards": ["C1", "C2", "C3"], "seats": [0, 2, 1]}, "hand_sizes": [9, 9, 9]}
    rows = board.seat_rows(view, ["A", "B", "C"])
    assert [r[3].plain.split()[0] for r in rows] == [plain(c, "mitigati") for c in ("C1", "C3", "C2")]
    assert [board.played_by({"leader": 1, "cards": ["x", "y"]}, i, 3) for i in range(2)] == [1, 2]


def _domain_order(variant: str, cards: list[str]) -> list[str]:
    """The rules' order of ``cards`` as each game package's own code gives it: Mighty's
    ``sorted_cards``, Mitigati's strength order (trumps with T20 above T21, the Fool, then
    coins, cups, batons and swords, strongest first)."""
    from domain.mighty.cards import sorted_cards
    from domain.mitigati.presentation import ORDER as MITIGATI_ORDER
    from domain.presentation import ordered

    return list(ordered(cards, MITIGATI_ORDER)) if variant == "mitigati" else list(sorted_cards(cards))


@pytest.mark.parametrize("variant", ["mighty-5", "mighty-8", "mitigati"])
def test_a_shuffled_deck_is_sorted_as_the_game_package_orders_it(variant: str) -> None:
    """The terminal sorts by the catalogue's ``order`` alone; that is the domain's order
    (two packs: the copies side by side)."""
    import random

    from domain.registry import game_named

    game = game_named(variant)
    deck = list(game.deck(game.make_rules(variant, {})))
    shuffled = random.Random(7).sample(deck, len(deck))
    assert sort_hand(shuffled, variant) == _domain_order(variant, shuffled)
